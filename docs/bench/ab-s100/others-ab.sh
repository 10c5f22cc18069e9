#!/bin/bash
# others-ab.sh <bin dir> <out dir> N: what the catch-up bound costs elsewhere,
# the arms (PMDT_XP 0 and 8, as catchup-ab.sh) alternated pass by pass: the
# loss grid's 1 Gbit/s row of the default controller (`--only bbr-1gbit
# loss`, a flow alone, 12 cells of 20 s) and four flows sharing
# (`--only bbr-share-4 adapt`, together and joining 2 s apart). One line per
# cell and run: the primary figure.
set -uo pipefail
BIN=$1; OUT=$2; N=$3; ARMS=${ARMS:-0 8}
mkdir -p "$OUT"
for p in $(seq 1 "$N"); do
  for x in $ARMS; do
    for e in "bbr-1gbit loss" "bbr-share-4 adapt"; do
      set -- $e
      o="$OUT/xp$x-p$p-$2"
      PMDT_XP=$x "$BIN/pmdt-bench" --bin-dir "$BIN" --out "$o" --repeat 1 --only "$1" "$2" > "$o.log" 2>&1
      python3 - "$o/$2.csv" "$x" "$p" <<'PY'
import csv, sys
f, x, p = sys.argv[1:]
rows = list(csv.DictReader(open(f)))
for cell in sorted({r["cell"] for r in rows}):
    m = {r["metric"]: float(r["median"]) for r in rows if r["cell"] == cell}
    if "steady_pct" in m:
        print(f"xp{x} p{p} {cell}: of_link {m['of_link_pct']:.2f} steady {m['steady_pct']:.2f}")
    else:
        print(f"xp{x} p{p} {cell}: jain {m['jain']:.4f}")
PY
    done
  done
done
