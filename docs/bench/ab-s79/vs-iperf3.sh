#!/bin/bash
# vs-iperf3.sh BIN PASSES: N flows x 5 s, pmdt over memif (docs/bench/ab-s78/ab.sh,
# default settings, --no-hash) and iperf3 TCP over loopback (-P N, client on
# CPU 0, server on CPU 1), alternated, N = 16 and 128 (iperf3's -P limit).
B=$1; P=${2:-3}
D=$(dirname "$0")
for pass in $(seq 1 $P); do
  for n in 16 128; do
    echo -n "pass $pass pmdt $n flows: "
    bash $D/../ab-s78/ab.sh $B /tmp/vs-iperf3-$n $n 5 2>&1 | tail -1 | cut -d' ' -f1-10
    iperf3 -s -1 -p 5299 -A 1 > /dev/null 2>&1 &
    sleep 0.5
    echo -n "pass $pass iperf3 TCP $n flows: "
    iperf3 -c 127.0.0.1 -p 5299 -P $n -t 5 -A 0 -J 2>/dev/null | python3 -c "import json,sys; d=json.load(sys.stdin); print('gbps %.2f' % (d['end']['sum_received']['bits_per_second']/1e9))"
    wait
  done
done
