#!/bin/bash
# session 84: EXP_MAXEX=0.08 (a shared queue's overflow may cost a flow up to 8 % of a round) vs 0.05, same binaries, alternated
cd /work/main; B=/tmp/s84/bin-exp
for i in $(seq 1 $1); do for x in 0.05 0.08; do
  export EXP_MAXEX=$x
  timeout 400 $B/pmdt-bench --bin-dir $B --out /tmp/s84/mx/cj-$x-$i --repeat 1 --only cubic-joins-shallow adapt > /dev/null 2>&1
  python3 -c "
import json
d=json.load(open('/tmp/s84/mx/cj-$x-$i/adapt.json'))
for c in d['cells']: print('maxex $x pass $i', c['name'], round(c['metrics']['max_share_pct']['median'],2), flush=True)
"
done; done
for x in 0.05 0.08; do
  export EXP_MAXEX=$x
  timeout 600 $B/pmdt-bench --bin-dir $B --out /tmp/s84/mx/share-$x --repeat 1 --only bbr-share-4-flows-joining adapt > /dev/null 2>&1
  python3 -c "
import json
d=json.load(open('/tmp/s84/mx/share-$x/adapt.json'))
for c in d['cells']: print('maxex $x', c['name'], 'jain', round(c['metrics']['jain']['median'],4), flush=True)
"
done
