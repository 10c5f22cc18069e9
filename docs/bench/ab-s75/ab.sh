#!/bin/bash
# A/B through pmdt-wanem: session 74's head-hole credit (88fbcc9, new) against the head before it (3c7f5e5),
# every BBR loss cell, alternated: new, head, new, head. Bins built from each commit into /tmp/s75/bin-{new,head}.
cd /work/main
for i in 1 2; do
  for t in new head; do
    /tmp/s75/bin-$t/pmdt-bench --bin-dir /tmp/s75/bin-$t --out /tmp/s75/wan-$t-$i --repeat 1 --only bbr-1 loss > /tmp/s75/wan-$t-$i.log 2>&1
  done
done
echo done > /tmp/s75/ab.done
