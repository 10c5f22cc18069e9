#!/bin/bash
# One pmdt transfer over memif between two processes, started as
# `pmdt-bench peers` starts its pmdt-memif cells (both ends run to completion,
# the receiver's flow thread on core 0, the sender's on core 1); prints the
# sender's goodput.
#   pair.sh BIN_DIR OUT_DIR [MTU] [SIZE]     e.g. pair.sh target/release /tmp/p 9000 16G
B=$1; O=$2; MTU=${3:-9000}; N=${4:-16G}
mkdir -p "$O"; rm -f /tmp/pair.sock
BS=""; [ "$MTU" -gt 1500 ] && BS=",bsize=16384"
"$B/pmdt-recv" --json --no-hash -N 1 --vdev "net_memif0,role=server,socket=/tmp/pair.sock,id=0$BS" \
  --lcores 0@0,1@1 --file-prefix pairr --ip 10.88.0.2 --udp-port 9000 --mtu "$MTU" > "$O/recv.out" 2> "$O/recv.err" &
sleep 1.5
"$B/pmdt-send" --json --no-hash --rtc -n "$N" --vdev "net_memif0,role=client,socket=/tmp/pair.sock,id=0$BS" \
  --lcores 0@1,1@0 --file-prefix pairs --ip 10.88.0.1 -c 10.88.0.2:9000 --mtu "$MTU" > "$O/send.out" 2> "$O/send.err"
wait
python3 -c "import json; d=json.load(open('$O/send.out')); print('$O', round(d['end']['goodput_bps']/1e9, 2), 'Gbit/s')"
