#!/bin/bash
# A/B through pmdt-wanem: wire v4 (new) against the head before it (9b835bf's code = /tmp/s71/bin-v4)
cd /work/main
B=/tmp/s72/bin-new/pmdt-bench
only_bbr="--only bbr-1"
lossless=""
for p in 100mbit 1gbit; do for r in 10 100 200; do lossless="$lossless --only bbr-$p-rtt$r-loss0"; done; done
$B --bin-dir /tmp/s72/bin-new --out /tmp/s72/wan-new-1 --repeat 1 $only_bbr loss > /tmp/s72/wan-new-1.log 2>&1
$B --bin-dir /tmp/s71/bin-v4 --out /tmp/s72/wan-head-1 --repeat 1 $only_bbr loss > /tmp/s72/wan-head-1.log 2>&1
$B --bin-dir /tmp/s72/bin-new --out /tmp/s72/wan-new-2 --repeat 1 $lossless loss > /tmp/s72/wan-new-2.log 2>&1
$B --bin-dir /tmp/s71/bin-v4 --out /tmp/s72/wan-head-2 --repeat 1 $lossless loss > /tmp/s72/wan-head-2.log 2>&1
echo done > /tmp/s72/ab.done
