#!/bin/bash
# side-by-side.sh <bin dir> <out dir> N: N passes, each running pmdt's BBR
# beside pmdt's CUBIC (`pmdt-bench --only bbr-vs-cubic adapt`: both flows
# from one pmdt-send, through pmdt-wanem over memif) and then Linux's TCP BBR
# beside Linux's TCP CUBIC through the same pmdt-wanem path
# (kernel-share.sh: the same four cells), so the two are measured in the
# same hour. One line per cell and pass.
set -uo pipefail
BIN=$1; OUT=$2; N=$3
mkdir -p "$OUT"
HERE=$(cd "$(dirname "$0")" && pwd)
for p in $(seq 1 "$N"); do
  "$BIN/pmdt-bench" --bin-dir "$BIN" --out "$OUT/pmdt-p$p" --repeat 1 --only bbr-vs-cubic adapt > "$OUT/pmdt-p$p.log" 2>&1
  python3 - "$OUT/pmdt-p$p/adapt.csv" "$p" <<'PY'
import csv, sys
rows = list(csv.DictReader(open(sys.argv[1])))
for cell in sorted({r["cell"] for r in rows}):
    m = {r["metric"]: float(r["median"]) for r in rows if r["cell"] == cell}
    print(f"pmdt p{sys.argv[2]} {cell}: bbr {m['bbr_pct']:.1f}% cubic {m['cubic_pct']:.1f}%")
PY
  for c in cj bvc1 bvc5 bj; do
    echo "kernel p$p $(bash "$HERE/kernel-share.sh" "$BIN" "$OUT/kernel" "$c" "p$p")"
  done
done
