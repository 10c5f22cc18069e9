#!/bin/bash
# prejoin.sh <F bin dir> <H bin dir> <out dir> N: CUBIC joining BBR
# (`pmdt-bench --only bbr-vs-cubic-cubic-joins adapt`) with the controller's
# and the connections' debug log, the two builds alternated pass by pass;
# prejoin.py counts, per run, the checks that found another flow's queue
# before CUBIC started (2 s after the first connection's "connected").
set -uo pipefail
F=$1; H=$2; OUT=$3; N=$4
mkdir -p "$OUT"
for p in $(seq 1 "$N"); do
  for arm in F H; do
    if [ "$arm" = F ]; then B=$F; else B=$H; fi
    o=$OUT/$arm-p$p
    RUST_LOG=pmdt_proto::congestion::bbr=debug,pmdt_proto::connection=debug \
      "$B/pmdt-bench" --bin-dir "$B" --out "$o" --repeat 1 --only bbr-vs-cubic-cubic-joins adapt > "$o.log" 2>&1
    python3 "$(dirname "$0")/../ab-s104/cells.py" "$o"
    python3 "$(dirname "$0")/prejoin.py" "$o"/logs/*/send.err
  done
done
