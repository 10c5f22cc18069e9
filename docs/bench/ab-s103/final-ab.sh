#!/bin/bash
# final build (3f857be6) against the head (bin9 with PMDT_XP=0), alternated
cd "${S103:-/tmp/s103}" # holds binF (the final build) and bin9 (the toggle build)
for p in 1 2 3; do
  for arm in F H; do
    if [ $arm = F ]; then B=binF; X=0; else B=bin9; X=0; fi
    o=fin/$arm-p$p; mkdir -p fin
    PMDT_XP=$X $B/pmdt-bench --bin-dir $B --out $o --repeat 1 --only bbr-vs-cubic-cubic-joins adapt > $o.log 2>&1
    echo "$arm p$p: bbr $(grep -h ',bbr_pct,' $o/adapt.csv | cut -d, -f6 | cut -c1-4) cubic $(grep -h ',cubic_pct,' $o/adapt.csv | cut -d, -f6 | cut -c1-4)"
  done
done
