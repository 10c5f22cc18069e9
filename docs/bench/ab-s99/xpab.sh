#!/bin/bash
# xpab.sh <cj|4j> <passes>: CUBIC joining BBR (cj) or four BBR flows joining
# (4j), alternated: head = PROBE_LOSS_EXCESS 1 % (PMDT_XP unset), xp = 0.2 %
# (PMDT_XP=0.002), one build with a temporary toggle (/tmp/s99/binX); the
# debug log of bbr::loss only. Prints BBR's share (cj) or Jain's index (4j),
# pmdt-wanem's overflow episodes and the sender's "a probe overflowed" lines.
cd /work/main
B=/tmp/s99/binX
export RUST_LOG=pmdt_proto::congestion::bbr::loss=debug
case $1 in
  4j) only=bbr-share-4-flows-joining; metric=jain; f=5; out=/tmp/s99/xpab4;;
  cj) only=bbr-vs-cubic-cubic-joins; metric=max_share_pct; f=6; out=/tmp/s99/xpab;;
esac
for p in $(seq 1 $2); do
  for m in head xp; do
    o=$out/$m-$p
    mkdir -p $out
    if [ $m = xp ]; then export PMDT_XP=0.002; else unset PMDT_XP; fi
    $B/pmdt-bench --bin-dir $B --out $o --repeat 1 --only $only adapt > $o.log 2>&1
    w=$(ls $o/logs/*/wanem.err); s=$(ls $o/logs/*/send.err)
    echo "$m $p $(grep ",$metric," $o/adapt.csv | cut -d, -f$f) overflows $(grep -c "A->B overflow" $w) probe_overflows $(grep -c "a probe overflowed" $s)"
  done
done
