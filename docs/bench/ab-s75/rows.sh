#!/bin/bash
# After ab.sh: the README loss table's rows that were measured on older builds, on 88fbcc9 (one run each).
cd /work/main
while [ ! -f /tmp/s75/ab.done ]; do sleep 10; done
B=/tmp/s75/bin-new
for row in bbr-resumed bbr-jumbo bbr-fast-start paced-; do
  $B/pmdt-bench --bin-dir $B --out /tmp/s75/rows-$row --repeat 1 --only $row loss > /tmp/s75/rows-$row.log 2>&1
done
echo done > /tmp/s75/rows.done
