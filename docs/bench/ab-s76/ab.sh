#!/bin/bash
# Session 76: session 39's build (5dacfdf, OLD) and the head (0a2c52b, NEW)
# alternated: the peers experiment's memif cells and iperf3's TCP, one run per
# cell per pass (PASSES), then pairs of 16 GiB jumbo transfers (pair.sh).
OLD=${OLD:-/tmp/s76/old/target/release}
NEW=${NEW:-/tmp/s76/bin}
OUT=${OUT:-/tmp/s76/abm}
D=$(dirname "$0")
"$D/alternate.sh" "$OUT" "${PASSES:-1 2 3 4 5 6 7 8}" old "$OLD" new "$NEW" -- \
  --only pmdt-memif --only iperf3-tcp peers
for i in ${PAIRS:-1 2 3 4 5 6 7 8}; do
  "$D/pair.sh" "$NEW" "$OUT/jumbo-new-$i" 9000 16G
  "$D/pair.sh" "$OLD" "$OUT/jumbo-old-$i" 9000 16G
done
