import json,sys
d=json.load(open(sys.argv[1]))
step=int(sys.argv[2]) if len(sys.argv)>2 else 5
for k,iv in enumerate(d['intervals']):
    if k%step: continue
    s=iv['streams']
    print(f"{s[0]['end']:6.1f} "+" | ".join(f"f{x['flow']} {x['bits_per_second']/1e6:5.0f} cw {x['snd_cwnd']/1e6:5.2f} rtt {x['rtt']/1000:5.1f} rx {x['retransmits']:4d} {x['cc_state'][:14]:14s}" for x in s))
