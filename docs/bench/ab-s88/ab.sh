#!/bin/bash
# alternated: write_ready in the mux sender on/off (EXP_NOREADY), same build
cd "$(dirname "$0")"
for i in $(seq 1 $1); do
 for cell in "256 --pipeline" "1000 " "256 " "1000 --pipeline"; do
  set -- $cell; N=$1; X=$2
  for arm in on off; do
   if [ $arm = off ]; then export EXP_NOREADY=1; else unset EXP_NOREADY; fi
   r=$(EXTRA=$X ./pair.sh /tmp/s88/new $N 5 2>&1 | tail -1 | python3 -c 'import json,sys; d=json.loads(sys.stdin.read()); print(round(d["bits_per_second"]/1e9,2))' 2>&1)
   echo "pass$i N=$N $X $arm $r"
  done
 done
done
