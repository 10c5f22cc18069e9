import json,sys
d=json.load(open(sys.argv[1]))
iv=d['intervals']
# 1-s means per flow, cwnd of CUBIC at end of each second
for s in range(0,60):
    r={1:0,2:0}; cw=None; rt=0
    for x in iv:
        for st in x['streams']:
            if s <= st['start'] < s+1:
                r[st['flow']] += st['bytes']*8
                if st['flow']==2: cw=st['snd_cwnd']; rt+=st['retransmits']
    print(s, 'bbr %.0f' % (r[1]/1e6), 'cubic %.0f' % (r[2]/1e6), 'cubic_cwnd', cw, 'cubic_rtx', rt)
