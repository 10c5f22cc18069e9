#!/bin/bash
# CUBIC joining BBR: the head (PROBE_LOSS_EXCESS 1 %) and 0.2 % (PMDT_XP=0.002), one toggle build (/tmp/s99/binX), alternated; the debug log of bbr::loss only
cd /work/main
B=/tmp/s99/binX
export RUST_LOG=pmdt_proto::congestion::bbr::loss=debug
for p in $(seq 1 $1); do
  for m in head xp; do
    o=/tmp/s99/xpab/$m-$p
    mkdir -p /tmp/s99/xpab
    if [ $m = xp ]; then export PMDT_XP=0.002; else unset PMDT_XP; fi
    $B/pmdt-bench --bin-dir $B --out $o --repeat 1 --only bbr-vs-cubic-cubic-joins adapt > $o.log 2>&1
    w=$(ls $o/logs/*/wanem.err)
    s=$(ls $o/logs/*/send.err); echo "$m $p $(grep ",max_share_pct," $o/adapt.csv | cut -d, -f6) overflows $(grep -c "A->B overflow" $w) probe_overflows $(grep -c "a probe overflowed" $s)"
  done
done
