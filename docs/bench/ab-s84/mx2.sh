#!/bin/bash
cd /work/main; B=/tmp/s84/bin-exp
for x in 0.08 0.05; do
  export EXP_MAXEX=$x
  timeout 600 $B/pmdt-bench --bin-dir $B --out /tmp/s84/mx/share2-$x --repeat 1 --only bbr-share-4-flows adapt > /dev/null 2>&1
  python3 -c "
import json
d=json.load(open('/tmp/s84/mx/share2-$x/adapt.json'))
for c in d['cells']: print('maxex $x', c['name'], 'jain', round(c['metrics']['jain']['median'],4), flush=True)
"
done
