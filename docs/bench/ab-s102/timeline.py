#!/usr/bin/env python3
"""timeline.py <send.out> <from s> <to s>: a two-flow run's 0.2-s intervals from pmdt-send's JSON: flow 1 (BBR) Mbit/s, estimate, pacing rate, window, RTT, state, retransmissions, probe wait; flow 2 (CUBIC) Mbit/s, window, RTT, retransmissions."""
import json,sys
j=json.load(open(sys.argv[1]))
lo,hi=float(sys.argv[2]),float(sys.argv[3])
for iv in j['intervals']:
    s={x['flow']:x for x in iv['streams']}
    b,c=s[1],s[2]
    if b['start']<lo or b['start']>hi: continue
    print("%.1f B %4.0f est %4.0f pace %4.0f cwnd %5.0fK rtt %5.1f %-16s rtx %3d pw %3d| C %4.0f cwnd %5.0fK rtt %5.1f rtx %3d"%(b['start'],b['bits_per_second']/1e6,b['bandwidth_estimate']/1e6,b['pacing_rate']/1e6,b['snd_cwnd']/1e3,b['rtt']/1e3,b['cc_state'],b['retransmits'],b.get('probe_wait_rounds',0),c['bits_per_second']/1e6,c['snd_cwnd']/1e3,c['rtt']/1e3,c['retransmits']))
