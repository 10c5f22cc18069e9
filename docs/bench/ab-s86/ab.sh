#!/bin/bash
# session 86: EXP_HR=0/1/2 (Cruise headroom; and in Up) alternated, CUBIC joining BBR through 1 MiB
cd /work/main; B=/tmp/s86/bin-exp
for i in $(seq ${2:-1} $1); do for x in ${ARMS:-0 1 2}; do
  export EXP_HR=$x
  timeout 400 $B/pmdt-bench --bin-dir $B --out /tmp/s86/ab/cj-$x-$i --repeat 1 --only cubic-joins-shallow adapt > /dev/null 2>&1
  python3 -c "
import json
d=json.load(open('/tmp/s86/ab/cj-$x-$i/adapt.json'))
for c in d['cells']: print('hr $x pass $i', c['name'], round(c['metrics']['max_share_pct']['median'],2), flush=True)
"
done; done
