#!/bin/bash
# acknowledgment frequency, many flows: PMDT_EXP_ACK_EVERY / PMDT_EXP_ACK_DELAY_US (both tools), alternated
cd /work/main; B=/tmp/s89/binack
for i in 1 2; do for v in "2 1000" "8 1000" "8 4000"; do set -- $v
  PMDT_EXP_ACK_EVERY=$1 PMDT_EXP_ACK_DELAY_US=$2 $B/pmdt-bench --bin-dir $B --out /tmp/s89/ack-$1-$2-$i --repeat 1 --only flows-1000-t5 --only flows-256-t5 --only flows-16-t5 flows > /tmp/s89/ack-$1-$2-$i.log 2>&1
  echo "pass $i every $1 delay $2: $(grep ',goodput_gbps,' /tmp/s89/ack-$1-$2-$i/flows.csv | cut -d, -f2,5 | tr '\n' ' ')"
done; done
