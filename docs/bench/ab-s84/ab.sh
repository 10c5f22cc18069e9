#!/bin/bash
# session 84: alternate base (4a05fea: one late wake-up within 1 s keeps the queue) and new
# (keeps only a queue up to twice the longest absence of the last 2 s) through the tools; PASSES from $1
cd /work/main
for i in $(seq 1 $1); do for b in base new; do
  if [ $b = base ]; then B=/tmp/s83/bin-new; else B=/tmp/s84/bin; fi
  timeout 300 $B/pmdt-bench --bin-dir $B --out /tmp/s84/ab/loss-$b-$i --repeat 1 --only bbr-1gbit-rtt10-loss0 --only bbr-100mbit-rtt10-loss0 loss > /dev/null 2>&1
  timeout 400 $B/pmdt-bench --bin-dir $B --out /tmp/s84/ab/adapt-$b-$i --repeat 1 --only cubic-joins-shallow adapt > /dev/null 2>&1
  python3 - $b $i <<'PY'
import json,sys
b,i=sys.argv[1:]
for f in ['loss','adapt']:
    d=json.load(open(f'/tmp/s84/ab/{f}-{b}-{i}/{f}.json'))
    for c in d['cells']:
        m=c['metrics']
        keys=[k for k in ('steady_pct','max_share_pct','slow_state_share') if k in m]
        print(f'{b} pass{i}', c['name'], ' '.join(f"{k}={m[k]['median']:.2f}" for k in keys), flush=True)
PY
done; done
