#!/bin/bash
# Session 76: session 39's build (5dacfdf, OLD) and the head (0a2c52b, NEW)
# alternated: the peers experiment's memif cells and iperf3's TCP, one run per
# cell per pass (PASSES), then pairs of 16 GiB jumbo transfers (pair.sh).
OLD=${OLD:-/tmp/s76/old/target/release}
NEW=${NEW:-/tmp/s76/bin}
OUT=${OUT:-/tmp/s76/abm}
D=$(dirname "$0")
for i in ${PASSES:-1 2 3 4 5 6 7 8}; do
  for side in old new; do
    if [ $side = old ]; then B=$OLD; else B=$NEW; fi
    "$B/pmdt-bench" --bin-dir "$B" --out "$OUT/$side-$i" --repeat 1 --only pmdt-memif --only iperf3-tcp peers > "$OUT/$side-$i.log" 2>&1
  done
done
for i in ${PAIRS:-1 2 3 4 5 6 7 8}; do
  "$D/pair.sh" "$NEW" "$OUT/jumbo-new-$i" 9000 16G
  "$D/pair.sh" "$OLD" "$OUT/jumbo-old-$i" 9000 16G
done
