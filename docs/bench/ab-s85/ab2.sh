#!/bin/bash
# session 85: EXP_OV on/off, alternated: four BBR flows (together, joining) and the 10 ms loss cells (flow alone)
cd /work/main; B=/tmp/s85/bin-exp
for i in $(seq 1 $1); do for x in off on; do
  if [ $x = on ]; then export EXP_OV=1; else unset EXP_OV; fi
  timeout 400 $B/pmdt-bench --bin-dir $B --out /tmp/s85/ab2/share-$x-$i --repeat 1 --only bbr-share-4 adapt > /dev/null 2>&1
  timeout 400 $B/pmdt-bench --bin-dir $B --out /tmp/s85/ab2/loss-$x-$i --repeat 1 --only bbr-1gbit-rtt10-loss0 --only bbr-100mbit-rtt10-loss0 loss > /dev/null 2>&1
  python3 - $x $i <<'PY'
import json,sys
x,i=sys.argv[1:]
for f,k in (('share','adapt'),('loss','loss')):
    d=json.load(open(f'/tmp/s85/ab2/{f}-{x}-{i}/{k}.json'))
    for c in d['cells']:
        m=c['metrics']
        keys=[k2 for k2 in ('jain','steady_pct') if k2 in m]
        print(f'ov {x} pass{i}', c['name'], ' '.join(f"{k2}={m[k2]['median']:.4f}" for k2 in keys), flush=True)
PY
done; done
