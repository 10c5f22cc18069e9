#!/bin/bash
# Three arms alternated through one toggle build (/tmp/s99/binY): head = PROBE_LOSS_EXCESS 1 % (PMDT_XP unset),
# flat = 0.2 %, alone = 0.2 % unless the flow shares the bottleneck (another flow's queue seen lately), else 1 %.
# xp3.sh <cell: 4j|cj> <passes>; the debug log of bbr::loss only.
cd /work/main
B=/tmp/s99/binY
export RUST_LOG=pmdt_proto::congestion::bbr::loss=debug
case $1 in 4j) only=bbr-share-4-flows-joining; metric=jain; f=5;; cj) only=bbr-vs-cubic-cubic-joins; metric=max_share_pct; f=6;; esac
for p in $(seq 1 $2); do
  for m in head flat alone; do
    o=/tmp/s99/xp3-$1/$m-$p
    mkdir -p /tmp/s99/xp3-$1
    if [ $m = head ]; then unset PMDT_XP; else export PMDT_XP=$m; fi
    $B/pmdt-bench --bin-dir $B --out $o --repeat 1 --only $only adapt > $o.log 2>&1
    w=$(ls $o/logs/*/wanem.err); s=$(ls $o/logs/*/send.err)
    echo "$m $p $(grep ",$metric," $o/adapt.csv | cut -d, -f$f) overflows $(grep -c "A->B overflow" $w) probe_overflows $(grep -c "a probe overflowed" $s)"
  done
done
