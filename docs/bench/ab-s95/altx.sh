#!/bin/bash
# altx.sh <passes> <cell filter> <metric> <xp values...>: an adapt cell through
# the tools, one build with a temporary toggle (PMDT_XP=0 the head, 1 the bound
# at a third once checks confirmed other flows), alternated; results in
# /tmp/s95/alt/x<value>-<filter>-<pass>, with the controller's debug log.
n=$1; f=$2; m=$3; shift 3
d=/tmp/s95/bin
for i in $(seq 1 "$n"); do
  for x in "$@"; do
    o=/tmp/s95/alt/x$x-$f-$i
    rm -rf $o
    PMDT_XP=$x RUST_LOG=pmdt_proto::congestion::bbr=debug $d/pmdt-bench --bin-dir $d --out $o --repeat 1 --only $f adapt > $o.log 2>&1
    grep -h ",$m," $o/adapt.csv | awk -F, -v b=x$x -v i=$i -v f=$f '{print f, b, i, $5}'
  done
done
