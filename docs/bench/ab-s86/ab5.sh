#!/bin/bash
# session 86: baseline (bin-exp2, EXP_HR=0) / headroom in Down, Cruise, Refill (bin-new) / and in Up unless far below the recent peak (bin-new, EXP_UP=1), alternated.
# passes 1-2: CUBIC joining BBR through 1 MiB, four BBR flows, BBR beside CUBIC through 5 MiB; later passes: CUBIC joining only
cd /work/main
for i in $(seq ${2:-1} $1); do for x in base hr up; do
  unset EXP_UP EXP_HR
  case $x in base) B=/tmp/s86/bin-exp2; export EXP_HR=0;; hr) B=/tmp/s86/bin-new;; up) B=/tmp/s86/bin-new; export EXP_UP=1;; esac
  if [ $i -le 2 ]; then ONLY="--only cubic-joins-shallow --only bbr-share-4 --only deep"; else ONLY="--only cubic-joins-shallow"; fi
  timeout 900 $B/pmdt-bench --bin-dir $B --out /tmp/s86/ab5/all-$x-$i --repeat 1 $ONLY adapt > /dev/null 2>&1
  python3 - $x $i <<'PY'
import json,sys
x,i=sys.argv[1:]
d=json.load(open(f'/tmp/s86/ab5/all-{x}-{i}/adapt.json'))
for c in d['cells']:
    m=c['metrics']
    keys=[k2 for k2 in ('jain','max_share_pct','bbr_pct') if k2 in m]
    print(f'{x} pass{i}', c['name'], ' '.join(f"{k2}={m[k2]['median']:.4f}" for k2 in keys), flush=True)
PY
done; done
