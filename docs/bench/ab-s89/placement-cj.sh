#!/bin/bash
cd /work/main
B=/tmp/s89/binx
for i in 1 2 3 4; do for w in 1 0; do
  $B/pmdt-bench --wanem-beside $( [ $w = 0 ] && echo receiver || echo sender ) --bin-dir $B --out /tmp/s89/place/cj-w$w-$i --repeat 1 --only cubic-joins-shallow adapt > /tmp/s89/place/cj-w$w-$i.log 2>&1
  echo "cj pass $i wanem $w: $(grep max_share_pct /tmp/s89/place/cj-w$w-$i/adapt.csv | cut -d, -f6 | cut -c1-5) late $(grep -o 'late for pacing [0-9]*%' /tmp/s89/place/cj-w$w-$i/logs/*/send.err | head -1) $(date +%T)"
done; done
