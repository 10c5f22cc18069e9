#!/bin/bash
# session 87: many flows, main (/tmp/s87/main) vs small initial tracking/storage rings (/tmp/s87/small), alternated
cd /work/main
for i in $(seq ${2:-1} $1); do for x in main small; do
  B=/tmp/s87/$x
  timeout 900 $B/pmdt-bench --bin-dir $B --out /tmp/s87/fl/$x-$i --repeat 1 flows > /dev/null 2>&1
  python3 - $x $i <<'PY'
import json,sys
x,i=sys.argv[1:]
d=json.load(open(f'/tmp/s87/fl/{x}-{i}/flows.json'))
print(f'{x} pass{i}', ' '.join(f"{c['name']}={c['metrics']['goodput_gbps']['median']:.2f}" for c in d['cells'] if 'goodput_gbps' in c['metrics']), flush=True)
PY
done; done
