#!/bin/bash
# session 87: base (EXP_NOHR=1) / headroom (shipped) / headroom without the own-absence term (EXP_NOABS=1), alternated.
cd /work/main
B=/tmp/s87/new
for i in $(seq ${2:-1} $1); do for x in base hr noabs; do
  unset EXP_NOHR EXP_NOABS
  case $x in base) export EXP_NOHR=1;; noabs) export EXP_NOABS=1;; esac
  timeout 900 $B/pmdt-bench --bin-dir $B --out /tmp/s87/ab/cj-$x-$i --repeat 1 --only cubic-joins-shallow adapt > /dev/null 2>&1
  timeout 900 $B/pmdt-bench --bin-dir $B --out /tmp/s87/ab/loss-$x-$i --repeat 1 --only bbr-1gbit-rtt100-loss0 --only bbr-1gbit-rtt200-loss1 loss > /dev/null 2>&1
  python3 - $x $i <<'PY'
import json,sys
x,i=sys.argv[1:]
for f,keys in ((f'/tmp/s87/ab/cj-{x}-{i}/adapt.json',('jain','bbr_pct','of_link_pct')),(f'/tmp/s87/ab/loss-{x}-{i}/loss.json',('of_link_pct','steady_pct'))):
    try: d=json.load(open(f))
    except Exception as e: print(x,i,'missing',f); continue
    for c in d['cells']:
        m=c['metrics']
        print(f'{x} pass{i}', c['name'], ' '.join(f"{k2}={m[k2]['median']:.3f}" for k2 in keys if k2 in m), flush=True)
PY
done; done
