#!/bin/bash
# bbr 1 Gbit/s x 10 ms lossless: base (51fceaa) and new binaries alternated
cd /work/main
for i in $(seq 1 ${PASSES:-3}); do for v in bin new; do B=/tmp/s91/$v
  $B/pmdt-bench --bin-dir $B --out /tmp/s91/lab/$v-$i --repeat 1 --only bbr-1gbit-rtt10-loss0 loss > /tmp/s91/lab/$v-$i.log 2>&1
  echo "pass $i $v: $(grep -h '"bbr-1gbit-rtt10-loss0"' /tmp/s91/lab/$v-$i/loss.csv | grep -E ',(steady_pct|retransmitted|of_link_pct),' | cut -d, -f4,5 | tr '\n' ' ')"
done; done
