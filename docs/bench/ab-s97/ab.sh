#!/bin/bash
# ab.sh <passes> <out> <toggles> <cells...>: loss grid cells through the tools, one build with a temporary
# toggle (PMDT_XP=0 the head 7194330a, 1 the least queue worth checking capped at 5 ms, 2 capped at 4 ms;
# since removed), alternated, one run each per pass, with the controller debug log. Prints: cell, toggle,
# pass, whole-run %, steady-state %, and the log's counts: "another flow" verdicts on an overflow, cuts to a
# shared overflow, checks of whose queue stands, and their verdicts (own, another).
P=$1; O=$2; T=$3; shift 3
B=${BIN:-/tmp/s97/bin}
ONLY=""; for c in "$@"; do ONLY="$ONLY --only $c"; done
for p in $(seq 1 $P); do for x in $T; do
  PMDT_XP=$x RUST_LOG=pmdt_proto::congestion::bbr=debug $B/pmdt-bench --bin-dir $B --out $O/x$x-$p --repeat 1 $ONLY loss > $O/x$x-$p.log 2>&1
  python3 - $O/x$x-$p/loss.json $x $p $O/x$x-$p <<'PY'
import json,sys,glob,os
d=json.load(open(sys.argv[1]))
logs=sorted(glob.glob(sys.argv[4]+'/logs/*/send.err'))
for i,c in enumerate(d['cells']):
    m=c['metrics']
    t=open(logs[i]).read() if i < len(logs) else ''
    print(c['name'], 'x'+sys.argv[2], sys.argv[3], round(m['of_link_pct']['runs'][0],1), round(m['steady_pct']['runs'][0],1),
      'verdict', t.count("another flow's queued"), 'cut', t.count('cuts inflight_hi'), 'checks', t.count('checking whose'), 'own', t.count('verdict=Own'), 'another', t.count('verdict=Another'), flush=True)
PY
done; done
