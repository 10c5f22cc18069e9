#!/bin/bash
# ab.sh <passes> <out> <cells...>: the loss grid cells through the tools, one build with a temporary
# toggle (PMDT_XP=0 the head 5e63e33c, 1 the fix of 498007d; since removed), alternated, one run each per pass,
# with the controller debug log. Prints: cell, toggle, pass, whole-run %, steady-state %.
P=$1; O=$2; shift 2
ONLY=""; for c in "$@"; do ONLY="$ONLY --only $c"; done
for p in $(seq 1 $P); do for x in 0 1; do
  PMDT_XP=$x RUST_LOG=pmdt_proto::congestion::bbr=debug /tmp/s96/bin/pmdt-bench --bin-dir /tmp/s96/bin --out $O/x$x-$p --repeat 1 $ONLY loss > $O/x$x-$p.log 2>&1
  python3 - $O/x$x-$p/loss.json $x $p <<'PY'
import json,sys
d=json.load(open(sys.argv[1]))
for c in d['cells']:
    m=c['metrics']
    print(c['name'], 'x'+sys.argv[2], sys.argv[3], round(m['of_link_pct']['runs'][0],1), round(m['steady_pct']['runs'][0],1))
PY
done; done
