#!/bin/bash
# alternate base (EXP_LIFT unset) and exp4 through the tools; PASSES from $1
cd /work/main
for i in $(seq 1 $1); do for e in 0 4; do
  if [ $e = 4 ]; then export EXP_LIFT=4; else unset EXP_LIFT; fi
  timeout 300 /tmp/s83/bin-exp/pmdt-bench --bin-dir /tmp/s83/bin-exp --out /tmp/s83/ab/loss-$e-$i --repeat 1 --only bbr-1gbit-rtt10-loss0 --only bbr-100mbit-rtt10-loss0 loss > /dev/null 2>&1
  timeout 400 /tmp/s83/bin-exp/pmdt-bench --bin-dir /tmp/s83/bin-exp --out /tmp/s83/ab/adapt-$e-$i --repeat 1 --only cubic-joins-shallow adapt > /dev/null 2>&1
  python3 - $e $i <<'PY'
import json,sys
e,i=sys.argv[1:]
for f in ['loss','adapt']:
    d=json.load(open(f'/tmp/s83/ab/{f}-{e}-{i}/{f}.json'))
    for c in d['cells']:
        m=c['metrics']
        keys=[k for k in ('steady_pct','max_share_pct','slow_state_share') if k in m]
        print(f'exp{e} pass{i}', c['name'], ' '.join(f"{k}={m[k]['median']:.2f}" for k in keys), flush=True)
PY
done; done
