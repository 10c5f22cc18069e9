#!/bin/bash
# CUBIC joining BBR through 1 MiB: base (51fceaa) and new binaries alternated, one run per pass
cd /work/main
ONLY=${ONLY:-cubic-joins}
for i in $(seq ${FROM:-1} ${PASSES:-4}); do for v in bin new; do B=/tmp/s91/$v
  $B/pmdt-bench --bin-dir $B --out /tmp/s91/ab2/$v-$i --repeat 1 --only $ONLY adapt > /tmp/s91/ab2/$v-$i.log 2>&1
  echo "pass $i $v: $(grep -h 'bbr_pct\|cubic_pct\|jain' /tmp/s91/ab2/$v-$i/adapt.csv | cut -d, -f2,5,6 | tr '\n' ' ')"
done; done
