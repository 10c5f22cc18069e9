#!/bin/bash
cd /work/main
o=""
for p in 100mbit 1gbit; do for r in 10 100 200; do o="$o --only bbr-$p-rtt$r-loss1 --only bbr-$p-rtt$r-loss5"; done; done
/tmp/s72/bin-new/pmdt-bench --bin-dir /tmp/s72/bin-new --out /tmp/s72/wan-new-3 --repeat 2 $o loss > /tmp/s72/wan-new-3.log 2>&1
echo done > /tmp/s72/ab2.done
