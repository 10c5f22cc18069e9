#!/bin/bash
# CUBIC joining BBR through 1 MiB, head's tools with BBR's debug log, one run per pass
cd /work/main
for i in $(seq 1 ${PASSES:-8}); do B=/tmp/s92/bin
  RUST_LOG=pmdt_proto::congestion::bbr=debug $B/pmdt-bench --bin-dir $B --out /tmp/s92/cjdbg/$i --repeat 1 --only cubic-joins adapt > /tmp/s92/cjdbg/$i.log 2>&1
  echo "pass $i: $(python3 docs/bench/ab-s91/join.py /tmp/s92/cjdbg/$i/logs/*/send.out)"
done
