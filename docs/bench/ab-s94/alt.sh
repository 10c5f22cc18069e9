#!/bin/bash
# alt.sh <passes> <cell filter> <metric>: an adapt cell through the tools,
# session 93's build (/tmp/s93/bin, the head's code) and this session's
# (/tmp/s94/bin) alternated, one run each per pass; results in
# /tmp/s94/alt/<build>-<filter>-<pass>.
n=$1; f=$2; m=$3
for i in $(seq 1 "$n"); do
  for b in head new; do
    d=${NEW:-/tmp/s94/bin}; [ $b = head ] && d=/tmp/s93/bin
    o=/tmp/s94/alt/$b-$f-$i
    $d/pmdt-bench --bin-dir $d --out $o --repeat 1 --only $f adapt > $o.log 2>&1
    grep -h ",$m," $o/adapt.csv | awk -F, -v b=$b -v i=$i -v f=$f '{print f, b, i, $0}'
  done
done
