#!/bin/bash
# alt-dbg.sh <bin dir> <out dir> <passes>: CUBIC joining BBR, the controller's
# debug log on (dbg) and off (nodbg), alternated; BBR's share of the link and,
# when pmdt-wanem logged them (f83930ed on), its overflow episodes.
# dbg-ab.txt: /tmp/s98/binL (d876d2f7), 6 passes; ovab.txt: f83930ed's build, 3.
cd /work/main
B=$1; O=$2
for p in $(seq 1 $3); do
  for m in dbg nodbg; do
    o=$O/$m-$p
    if [ $m = dbg ]; then export RUST_LOG=pmdt_proto::congestion::bbr=debug; else unset RUST_LOG; fi
    $B/pmdt-bench --bin-dir $B --out $o --repeat 1 --only bbr-vs-cubic-cubic-joins adapt > $o.log 2>&1
    w=$(ls $o/logs/*/wanem.err)
    echo "$m $p $(grep ',max_share_pct,' $o/adapt.csv | cut -d, -f6) overflows $(grep -c 'A->B overflow' $w)"
  done
done
