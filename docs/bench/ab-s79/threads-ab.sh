#!/bin/bash
# threads-ab.sh HEAD_BIN NEW_BIN PASSES: the build before (a thread per flow)
# and the new one (one thread serving all flows on each side) alternated,
# 2/16/256/1000 flows x 5 s over memif, default settings (run to completion).
# Prints one line per run (docs/bench/ab-s78/ab.sh).
H=$1; N=$2; P=${3:-3}
D=$(dirname "$0")
for pass in $(seq 1 $P); do
  for n in 2 16 256 1000; do
    for v in head new; do
      B=$H; [ $v = new ] && B=$N
      echo -n "pass $pass $v $n flows: "
      bash $D/../ab-s78/ab.sh $B /tmp/threads-ab-$v-$n $n 5 2>&1 | tail -1
    done
  done
done
