#!/bin/bash
# 1000 run-to-completion flows over memif, as pmdt-bench's flows-1000-t5 but for ${T:-15} s; perf in the middle if PERF=1
B=${B:-/tmp/s89/bin}; N=${N:-1000}; T=${T:-15}
cd /tmp/s89/m; rm -f /tmp/s89m.sock
$B/pmdt-recv --json --no-hash -N $N -i 1 --vdev net_memif0,role=server,socket=/tmp/s89m.sock,id=0 --lcores 0@0,1@1 --file-prefix s89r --ip 10.88.0.2 --udp-port 9000 $REXTRA > recv.out 2> recv.err &
RP=$!
for i in $(seq 1 60); do grep -q "listening on" recv.err 2>/dev/null && break; sleep 0.5; done
$B/pmdt-send --json --no-hash -i 1 --vdev net_memif0,role=client,socket=/tmp/s89m.sock,id=0 --lcores 0@1,1@0 --file-prefix s89s --ip 10.88.0.1 -c 10.88.0.2:9000 -P $N -t $T $SEXTRA > send.out 2> send.err &
SP=$!
sleep 5
if [ "$PERF" = 1 ]; then perf record -a -g -F 999 -o perf.data -- sleep 5 > /dev/null 2>&1; else
  read -r a1 b1 <<< "$(awk '{print $14+$15}' /proc/$SP/stat) $(awk '{print $14+$15}' /proc/$RP/stat)"; sleep 5
  read -r a2 b2 <<< "$(awk '{print $14+$15}' /proc/$SP/stat) $(awk '{print $14+$15}' /proc/$RP/stat)"
  echo "cpu over 5 s: send $(( (a2-a1) ))% recv $(( (b2-b1) ))% (ticks/5s = %)"; fi
wait $SP; sleep 1; kill -INT $RP 2>/dev/null; wait $RP
grep -o '"goodput_bps": [0-9.e+]*' send.out | head -1
tail -2 send.err
