#!/bin/bash
# alt-cj.sh <passes>: the CUBIC-joining adapt cell through the tools, the
# head's build (/tmp/s93/hbin) and the new one (/tmp/s93/bin) alternated,
# one run each per pass; results in /tmp/s93/alt/{head,new}-N.
for i in $(seq 1 "$1"); do
  for b in head new; do
    d=/tmp/s93/bin; [ $b = head ] && d=/tmp/s93/hbin
    $d/pmdt-bench --bin-dir $d --out /tmp/s93/alt/$b-$i --repeat 1 --only bbr-vs-cubic-cubic-joins adapt > /tmp/s93/alt/$b-$i.log 2>&1
    grep -h '^adapt,.*,bbr_pct,' /tmp/s93/alt/$b-$i/adapt.csv | awk -F, -v b=$b -v i=$i '{print b, i, $7}'
  done
done
