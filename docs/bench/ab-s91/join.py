import json,sys
# CUBIC joining BBR: CUBIC's window at 4 s (after the join), its cuts (window down 15 % in an interval) by 4.5 s, BBR's share of 1 Gbit/s from 15 s (the 0.2-s intervals summed: within a point of pmdt-bench's bbr_pct)
for p in sys.argv[1:]:
    d=json.load(open(p))
    cw=None; cuts=0; prev=None; tot={}
    for iv in d['intervals']:
        s={f['flow']:f for f in iv['streams']}
        c=s.get(2)
        if c and prev and c['snd_cwnd']<prev*0.85 and c['end']<4.5: cuts+=1
        if c: prev=c['snd_cwnd']
        if c and cw is None and c['end']>=3.99: cw=c['snd_cwnd']
        for f in iv['streams']:
            if f['end']>15: tot[f['flow']]=tot.get(f['flow'],0)+f['bits_per_second']*(f['end']-f['start'])
    print("%-40s cubic cwnd at 4 s %5dK, cuts by 4.5 s %d, bbr %.1f%%" % (p.split('/')[-4] if 'logs' in p else p, (cw or 0)/1e3, cuts, tot.get(1,0)/45/1e9*100))
