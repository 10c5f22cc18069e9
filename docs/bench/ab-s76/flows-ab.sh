#!/bin/bash
# Session 76: the BBR pacing floor (NEW: tools built with it) alternated with
# the head before it (HEAD), four passes of the flows experiment's 1-, 16-,
# 256- and 1000-flow cells, one run each; flows-summary.py prints the runs.
NEW=${NEW:-/tmp/s76/binf}
HEAD=${HEAD:-/tmp/s76/bin}
OUT=${OUT:-/tmp/s76/abf}
for i in 1 2 3 4; do
  for side in new head; do
    if [ $side = new ]; then B=$NEW; else B=$HEAD; fi
    "$B/pmdt-bench" --bin-dir "$B" --out "$OUT/$side-$i" --repeat 1 --only flows-256 --only flows-1000 --only flows-1 flows > "$OUT/$side-$i.log" 2>&1
  done
done
