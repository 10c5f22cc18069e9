#!/bin/bash
# build-ab.sh <F bin dir> <H bin dir> <out dir> N "<only> <experiment>"...:
# two builds alternated pass by pass (F first), each run of `pmdt-bench
# --only <only> <experiment>` once per build and pass; one line per cell
# (../ab-s104/cells.py: the sharing cells' shares, or Jain and the link's use).
# FIRST_ARMS runs only those arms in the first pass (a pass resumed: "H");
# P0 numbers the first pass (default 1).
set -uo pipefail
F=$1; H=$2; OUT=$3; N=$4; shift 4
RUNS=("$@")
ARMS=${FIRST_ARMS:-F H}
mkdir -p "$OUT"
for p in $(seq "${P0:-1}" $((${P0:-1} + N - 1))); do
  for arm in $ARMS; do
    if [ "$arm" = F ]; then B=$F; else B=$H; fi
    for run in "${RUNS[@]}"; do
      read -r only exp <<< "$run"
      o=$OUT/$arm-p$p-$only
      "$B/pmdt-bench" --bin-dir "$B" --out "$o" --repeat 1 --only "$only" "$exp" > "$o.log" 2>&1
      python3 "$(dirname "$0")/../ab-s104/cells.py" "$o"
    done
  done
  ARMS="F H"
done
