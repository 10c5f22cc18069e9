#!/bin/bash
# pmdt-wanem beside the sender (CPU 1, pmdt-bench's placement) or beside the receiver (CPU 0), alternated
cd /work/main
B=/tmp/s89/binx
for i in 1 2; do for w in 1 0; do
  $B/pmdt-bench --wanem-beside $( [ $w = 0 ] && echo receiver || echo sender ) --bin-dir $B --out /tmp/s89/place/loss-w$w-$i --repeat 1 --only bbr-1gbit-rtt10-loss1 --only bbr-1gbit-rtt100-loss1 --only bbr-1gbit-rtt200-loss1 --only bbr-100mbit-rtt200-loss1 loss > /tmp/s89/place/loss-w$w-$i.log 2>&1
  echo "loss pass $i wanem $w done $(date +%T)"
done; done
for w in 1 0; do
  $B/pmdt-bench --wanem-beside $( [ $w = 0 ] && echo receiver || echo sender ) --bin-dir $B --out /tmp/s89/place/adapt-w$w --repeat 1 adapt > /tmp/s89/place/adapt-w$w.log 2>&1
  echo "adapt wanem $w done $(date +%T)"
done
