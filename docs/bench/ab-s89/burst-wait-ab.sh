#!/bin/bash
# alternate PMDT_EXP_BURST_WAIT_MS=0 and =$W on the CUBIC-joins-shallow cell
W=${W:-5000}
cd /work/main
for i in $(seq 1 ${N:-5}); do
  for w in 0 $W; do
    PMDT_EXP_BURST_WAIT_MS=$w /tmp/s89/binx/pmdt-bench --bin-dir /tmp/s89/binx --out /tmp/s89/ab1/w$w-$i --repeat 1 --only cubic-joins-shallow adapt > /tmp/s89/ab1/w$w-$i.log 2>&1
    echo "pass $i wait $w: $(grep max_share_pct /tmp/s89/ab1/w$w-$i/adapt.csv | cut -d, -f6) bbr; cubic $(grep cubic_pct /tmp/s89/ab1/w$w-$i/adapt.csv | cut -d, -f6)"
  done
done
