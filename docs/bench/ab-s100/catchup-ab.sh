#!/bin/bash
# catchup-ab.sh <bin dir> <out dir> N: CUBIC joining BBR through 1 MiB
# (`pmdt-bench --only bbr-vs-cubic-cubic-joins adapt`), arms alternated pass
# by pass through one build with a temporary toggle (PMDT_XP): 0 the head
# (a late sender makes up to a round trip, at most 20 ms), 8 at most 1 ms,
# 9 at most 5 ms.
# One line per run: BBR's and CUBIC's shares, and the overflow episodes (all,
# and after 5 s). ARMS picks the arms (9: at most 5 ms).
set -uo pipefail
BIN=$1; OUT=$2; N=$3; ARMS=${ARMS:-0 8}
mkdir -p "$OUT"
for p in $(seq 1 "$N"); do
  for x in $ARMS; do
    o="$OUT/xp$x-p$p"
    PMDT_XP=$x "$BIN/pmdt-bench" --bin-dir "$BIN" --out "$o" --repeat 1 --only bbr-vs-cubic-cubic-joins adapt > "$o.log" 2>&1
    python3 - "$o" "$x" "$p" <<'PY'
import csv, glob, re, sys
o, x, p = sys.argv[1:]
m = {r["metric"]: float(r["median"]) for r in csv.DictReader(open(f"{o}/adapt.csv"))}
eps = late = 0
for f in glob.glob(f"{o}/logs/*/wanem.err"):
    for l in open(f):
        g = re.search(r"overflow at ([\d.]+) s ", l)
        if g:
            eps += 1
            late += float(g.group(1)) > 5
print(f"xp{x} p{p}: bbr {m.get('bbr_pct', float('nan')):.1f}% cubic {m.get('cubic_pct', float('nan')):.1f}%, episodes {eps}, after 5 s {late}")
PY
  done
done
