#!/bin/bash
# session 85: EXP_OV=1 (a Cruise round overflowing a standing queue says another flow) vs off, same binaries, alternated
cd /work/main; B=/tmp/s85/bin-exp
for i in $(seq ${2:-1} $1); do for x in off on; do
  if [ $x = on ]; then export EXP_OV=1; else unset EXP_OV; fi
  timeout 400 $B/pmdt-bench --bin-dir $B --out /tmp/s85/ab/cj-$x-$i --repeat 1 --only cubic-joins-shallow adapt > /dev/null 2>&1
  python3 -c "
import json
d=json.load(open('/tmp/s85/ab/cj-$x-$i/adapt.json'))
for c in d['cells']: print('ov $x pass $i', c['name'], round(c['metrics']['max_share_pct']['median'],2), flush=True)
"
done; done
