import json,sys
d=json.load(open(sys.argv[1]))
prev=None
cb=int(sys.argv[2]) if len(sys.argv)>2 else 2
bb=3-cb
for iv in d['intervals']:
    s={f['flow']:f for f in iv['streams']}
    c=s.get(cb)
    if c and prev and c['snd_cwnd']<prev*0.85: 
        b=s[bb]
        print("cubic cut at %.1f %dK->%dK; bbr cw %dK bw %d rx %d; cubic rx %d" % (c['end'],prev/1e3,c['snd_cwnd']/1e3,b['snd_cwnd']/1e3,(b.get('bandwidth_estimate') or 0)/1e6,b.get('retransmits',0),c.get('retransmits',0)))
    if c: prev=c['snd_cwnd']
