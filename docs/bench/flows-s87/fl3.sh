#!/bin/bash
cd /work/main
for i in $(seq 1 $1); do for x in main small s256; do
  B=/tmp/s87/$x
  timeout 900 $B/pmdt-bench --bin-dir $B --out /tmp/s87/fl3/$x-$i --repeat 1 --only flows-1000-t5 --only flows-256-t5 flows > /dev/null 2>&1
  python3 - $x $i <<'PY'
import json,sys
x,i=sys.argv[1:]
d=json.load(open(f'/tmp/s87/fl3/{x}-{i}/flows.json'))
print(f'{x} pass{i}', ' '.join(f"{c['name']}={c['metrics']['goodput_gbps']['median']:.2f}" for c in d['cells'] if 'goodput_gbps' in c['metrics']), flush=True)
PY
done; done
