#!/bin/bash
# session 86: EXP_HR=0/1 alternated: four BBR flows (together, joining), BBR beside CUBIC through 5 MiB (together, BBR joining), flow-alone loss cells
cd /work/main; B=/tmp/s86/bin-exp
for i in $(seq 1 $1); do for x in 0 1; do
  export EXP_HR=$x
  timeout 600 $B/pmdt-bench --bin-dir $B --out /tmp/s86/ab2/share-$x-$i --repeat 1 --only bbr-share-4 --only deep adapt > /dev/null 2>&1
  timeout 600 $B/pmdt-bench --bin-dir $B --out /tmp/s86/ab2/loss-$x-$i --repeat 1 --only bbr-1gbit-rtt10-loss0 --only bbr-100mbit-rtt10-loss0 --only bbr-1gbit-rtt100-loss1 loss > /dev/null 2>&1
  python3 - $x $i <<'PY'
import json,sys
x,i=sys.argv[1:]
for f,k in (('share','adapt'),('loss','loss')):
    d=json.load(open(f'/tmp/s86/ab2/{f}-{x}-{i}/{k}.json'))
    for c in d['cells']:
        m=c['metrics']
        keys=[k2 for k2 in ('jain','steady_pct','max_share_pct','bbr_pct') if k2 in m]
        print(f'hr {x} pass{i}', c['name'], ' '.join(f"{k2}={m[k2]['median']:.4f}" for k2 in keys), flush=True)
PY
done; done
