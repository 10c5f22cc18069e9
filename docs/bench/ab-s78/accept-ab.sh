#!/bin/bash
# accept-ab.sh HEAD_BIN NEW_BIN PASSES: 1000 pipeline flows x 5 s over memif,
# the head's tools and the new ones alternated (ab.sh prints the connect time,
# the aggregate goodput and when the last flow ended).
H=$1; N=$2; P=${3:-3}
here=$(dirname "$0")
for i in $(seq 1 "$P"); do
  for b in "$H" "$N"; do
    echo "pass $i $b: $(bash "$here/ab.sh" "$b" "/tmp/ab-s78-$(basename "$b")" 1000 5 --pipeline | tail -1)"
  done
done
