#!/bin/bash
# CUBIC joining BBR on f83930ed with the controller's debug log on, the run's logs on disk (/tmp) and on tmpfs (/dev/shm), alternated
cd /work/main
B=/tmp/s99/binO
export RUST_LOG=pmdt_proto::congestion::bbr=debug
for p in $(seq 1 $1); do
  for m in disk shm; do
    if [ $m = disk ]; then o=/tmp/s99/shmab/$m-$p; else o=/dev/shm/s99/$m-$p; fi
    mkdir -p $(dirname $o)
    $B/pmdt-bench --bin-dir $B --out $o --repeat 1 --only bbr-vs-cubic-cubic-joins adapt > $o.log 2>&1
    w=$(ls $o/logs/*/wanem.err)
    echo "$m $p $(grep ',max_share_pct,' $o/adapt.csv | cut -d, -f6) overflows $(grep -c 'A->B overflow' $w)"
  done
done
