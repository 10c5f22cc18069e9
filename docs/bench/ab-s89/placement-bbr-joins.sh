#!/bin/bash
# BBR joining CUBIC through 5 MiB, pmdt-wanem beside the sender or the receiver, alternated
cd /work/main
B=/tmp/s89/bin2
for i in 1 2 3 4; do for w in sender receiver; do
  $B/pmdt-bench --wanem-beside $w --bin-dir $B --out /tmp/s89/bj-$w-$i --repeat 1 --only bbr-joins-deep adapt > /tmp/s89/bj-$w-$i.log 2>&1
  echo "bbr-joins pass $i beside $w: bbr $(grep ',bbr_pct,' /tmp/s89/bj-$w-$i/adapt.csv | cut -d, -f6 | cut -c1-5) cubic $(grep ',cubic_pct,' /tmp/s89/bj-$w-$i/adapt.csv | cut -d, -f6 | cut -c1-5) $(date +%T)"
done; done
