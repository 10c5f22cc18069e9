#!/bin/bash
# session 86: EXP_HR=0/3/4 alternated (3: the headroom only where the room under inflight_hi is under 0.3 BDP; 4: and no check found another flow lately):
# CUBIC joining BBR through 1 MiB, four BBR flows (together, joining), BBR beside CUBIC through 5 MiB (together, BBR joining)
cd /work/main; B=/tmp/s86/bin-exp2
for i in $(seq ${2:-1} $1); do for x in ${ARMS:-0 3 4}; do
  export EXP_HR=$x
  timeout 900 $B/pmdt-bench --bin-dir $B --out /tmp/s86/ab3/all-$x-$i --repeat 1 --only cubic-joins-shallow --only bbr-share-4 --only deep adapt > /dev/null 2>&1
  python3 - $x $i <<'PY'
import json,sys
x,i=sys.argv[1:]
d=json.load(open(f'/tmp/s86/ab3/all-{x}-{i}/adapt.json'))
for c in d['cells']:
    m=c['metrics']
    keys=[k2 for k2 in ('jain','max_share_pct','bbr_pct') if k2 in m]
    print(f'hr {x} pass{i}', c['name'], ' '.join(f"{k2}={m[k2]['median']:.4f}" for k2 in keys), flush=True)
PY
done; done
