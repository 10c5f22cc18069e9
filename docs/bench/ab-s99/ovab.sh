#!/bin/bash
# CUBIC joining BBR on f83930ed (pmdt-wanem --log-overflows in the sharing cells), the controller's debug log on and off, alternated
cd /work/main
B=/tmp/s99/binO
for p in $(seq 1 $1); do
  for m in dbg nodbg; do
    o=/tmp/s99/ovab/$m-$p
    if [ $m = dbg ]; then export RUST_LOG=pmdt_proto::congestion::bbr=debug; else unset RUST_LOG; fi
    $B/pmdt-bench --bin-dir $B --out $o --repeat 1 --only bbr-vs-cubic-cubic-joins adapt > $o.log 2>&1
    w=$(ls $o/logs/*/wanem.err)
    echo "$m $p $(grep ',max_share_pct,' $o/adapt.csv | cut -d, -f6) overflows $(grep -c 'A->B overflow' $w)"
  done
done
