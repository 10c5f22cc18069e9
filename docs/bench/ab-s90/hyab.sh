#!/bin/bash
# HyStart++ A/B: the four BBR-beside-CUBIC cells, old (eb557cb) and new (HyStart++) binaries alternated, one run per cell per pass
cd /work/main
for i in 1 2 3; do for v in bin new; do B=/tmp/s90/$v
  $B/pmdt-bench --bin-dir $B --out /tmp/s90/ab-$v-$i --repeat 1 --only bbr-vs-cubic adapt > /tmp/s90/ab-$v-$i.log 2>&1
  echo "pass $i $v: $(grep -h 'max_share_pct\|,share' /tmp/s90/ab-$v-$i/adapt.csv | cut -d, -f1,2,5 | tr '\n' ' ')"
done; done
