import json,sys
for f in sys.argv[1:]:
    try: j=json.load(open(f+'/logs/adapt-001/send.out'))
    except Exception: print(f,"incomplete"); continue
    cw0=None; mincw=1e18; est=[]
    for iv in j['intervals']:
        s={x['flow']:x for x in iv['streams']}
        b=s[1]
        if 1.5<=b['start']<2.0: cw0=b['snd_cwnd']
        if 2.0<=b['start']<3.0: mincw=min(mincw,b['snd_cwnd']); est.append(b['bandwidth_estimate']/1e6)
    print("%-22s BBR cwnd %.1f MB -> %.1f MB over 2-3 s, estimate %s"%(f,cw0/1e6,mincw/1e6,[round(e) for e in est]))
