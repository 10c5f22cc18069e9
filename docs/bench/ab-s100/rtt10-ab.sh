#!/bin/bash
# rtt10-ab.sh <bin dir> <out dir> N: the loss grid's 1 Gbit/s × 10 ms cells of
# the default controller (a flow alone; `--only bbr-1gbit-rtt10- loss`), the
# catch-up arms (PMDT_XP, as catchup-ab.sh; ARMS, default "9 0") alternated
# pass by pass. One line per cell and run: steady_pct and of_link_pct.
set -uo pipefail
BIN=$1; OUT=$2; N=$3; ARMS=${ARMS:-9 0}
mkdir -p "$OUT"
for p in $(seq 1 "$N"); do
  for x in $ARMS; do
    o="$OUT/xp$x-p$p"
    PMDT_XP=$x "$BIN/pmdt-bench" --bin-dir "$BIN" --out "$o" --repeat 1 --only bbr-1gbit-rtt10- loss > "$o.log" 2>&1
    python3 - "$o/loss.csv" "$x" "$p" <<'PY'
import csv, sys
f, x, p = sys.argv[1:]
rows = list(csv.DictReader(open(f)))
for cell in sorted({r["cell"] for r in rows}):
    m = {r["metric"]: float(r["median"]) for r in rows if r["cell"] == cell}
    print(f"xp{x} p{p} {cell}: steady {m['steady_pct']:.2f} of_link {m['of_link_pct']:.2f}")
PY
  done
done
