import json,sys
d=json.load(open(sys.argv[1]))
lo=float(sys.argv[2]) if len(sys.argv)>2 else 0
for iv in d['intervals']:
    s=iv['streams']
    if s[0]['end']<lo: continue
    row=[]
    for f in s:
        row.append("%d:%5.0fM rx%4d cw%6.0fK bw%5.0f %s rtt%5.1f" % (f['flow'], f['bits_per_second']/1e6, f.get('retransmits',0), f.get('snd_cwnd',0)/1e3, (f.get('bandwidth_estimate') or 0)/1e6, (f.get('cc_state') or '')[:8], f.get('rtt',0)/1000))
    print("%5.1f " % s[0]['end'], " | ".join(row))
