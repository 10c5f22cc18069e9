#!/bin/bash
# final-ab.sh <final bin dir> <toggle bin dir> <out dir> N: CUBIC joining BBR
# (`pmdt-bench --only bbr-vs-cubic-cubic-joins adapt`), the final build (F)
# alternated pass by pass with the head (H: the toggle build at PMDT_XP=0).
F=$1; H=$2; OUT=$3; N=$4
mkdir -p "$OUT"
for p in $(seq 1 "$N"); do
  for arm in F H; do
    if [ $arm = F ]; then B=$F; else B=$H; fi
    o=$OUT/$arm-p$p
    PMDT_XP=0 "$B/pmdt-bench" --bin-dir "$B" --out "$o" --repeat 1 --only bbr-vs-cubic-cubic-joins adapt > "$o.log" 2>&1
    python3 "$(dirname "$0")/cells.py" "$o"
  done
done
