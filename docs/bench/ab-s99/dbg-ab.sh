#!/bin/bash
# CUBIC joining BBR on d876d2f7, the controller's debug log on and off, alternated
cd /work/main
B=/tmp/s98/binL
for p in $(seq 1 $1); do
  for m in dbg nodbg; do
    o=/tmp/s99/dbgab/$m-$p
    if [ $m = dbg ]; then export RUST_LOG=pmdt_proto::congestion::bbr=debug; else unset RUST_LOG; fi
    $B/pmdt-bench --bin-dir $B --out $o --repeat 1 --only bbr-vs-cubic-cubic-joins adapt > $o.log 2>&1
    echo "$m $p $(grep ',max_share_pct,' $o/adapt.csv | cut -d, -f6)"
  done
done
