# Session 76: the pacing floor's A/B over the many-flows cells (flows-ab.sh):
# prints each cell's runs, new build against the head's.
import json,os,sys
base=sys.argv[1] if len(sys.argv)>1 else 'docs/bench/ab-s76/flows'
cells=['flows-1','flows-16','flows-256','flows-1000','flows-16-t5','flows-256-t5','flows-1000-t5']
for c in cells:
    for side in ('new','head'):
        g=[];j=[];comp=[];rt=[]
        for i in range(1,9):
            f=f'{base}/{side}-{i}/flows.json'
            if not os.path.exists(f): continue
            for x in json.load(open(f))['cells']:
                if x['name']==c:
                    m=x['metrics']; g.append(round(m['goodput_gbps']['median'],2)); j.append(round(m['jain']['median'],3)); comp.append(round(m['completion_max_s']['median'],1)); rt.append(int(m['retransmitted']['median']))
        print(f"{c:14s} {side:4s} Gbit/s {g} jain {j} completion {comp} retx {rt}")
