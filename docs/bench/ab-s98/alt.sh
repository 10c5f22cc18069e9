#!/bin/bash
# alt.sh <passes> <out> <experiment> <toggles> <cells...>: cells of a pmdt-bench
# experiment (loss or adapt) through the tools, one build with a temporary toggle
# (PMDT_XP=0 the head 9609421a, 2 the landed rule of d876d2f7: a Cruise round's small
# overflow under a check of whose queue stands waits for its verdict; since removed), alternated, one run each per pass, with the
# controller's debug log. BIN: the build's directory. Each line: cell, toggle, pass,
# the cell's figures (loss: whole-run and steady-state % of the link; adapt: the
# cell's target metric), then counts from the senders' logs: `verdict` (a Cruise
# round's overflow taken for another flow's), `cut` (inflight_hi cut to a shared
# overflow), `checks` (checks of whose queue stands), `own`, `another` (verdicts),
# `waited` (an overflow that waited for a check under way).
P=$1; O=$2; E=$3; T=$4; shift 4
B=${BIN:-/tmp/s98/bin}
mkdir -p "$O"
ONLY=""; for c in "$@"; do ONLY="$ONLY --only $c"; done
for p in $(seq 1 "$P"); do for x in $T; do
  PMDT_XP=$x RUST_LOG=pmdt_proto::congestion::bbr=debug $B/pmdt-bench --bin-dir $B --out $O/x$x-$p --repeat 1 $ONLY $E > $O/x$x-$p.log 2>&1
  python3 - $O/x$x-$p/$E.json $x $p $O/x$x-$p <<'PY'
import json,sys,glob
d=json.load(open(sys.argv[1]))
dirs=sorted(glob.glob(sys.argv[4]+'/logs/*/'))
for i,c in enumerate(d['cells']):
    m=c['metrics']
    t=open(dirs[i]+'send.err').read() if i < len(dirs) else ''
    if 'steady_pct' in m:
        fig='%.1f %.1f' % (m['of_link_pct']['runs'][0], m['steady_pct']['runs'][0])
    else:
        fig=' '.join('%s=%.4g' % (k, m[k]['runs'][0]) for k in ('jain','max_share_pct','bbr_pct','down_s','up_s') if k in m and m[k]['runs'])
    print(c['name'], 'x'+sys.argv[2], sys.argv[3], fig,
      'verdict', t.count("another flow's queued"), 'cut', t.count('cuts inflight_hi'),
      'checks', t.count('checking whose'), 'own', t.count('verdict=Own'), 'another', t.count('verdict=Another'),
      'waited', t.count('overflowed a standing queue under a check: waits'), flush=True)
PY
done; done
