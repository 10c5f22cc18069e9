#!/bin/bash
# Session 88: one pmdt-recv and one pmdt-send over memif, pinned as pmdt-bench's flows cells.
# usage: pair.sh BIN N AMOUNT [perf-out-send [perf-out-recv]]   (BIN absolute; perf files land in /tmp/s88/p)
#   AMOUNT: seconds (-t) or, with a unit, bytes (-n), e.g. 5 or 4G
# env: EXTRA (both tools, e.g. --pipeline), SEXTRA / REXTRA (one tool), ZC (suffix of the
#   sender's vdev, e.g. ",zero-copy=yes"), RL / SL (--lcores of receiver / sender).
# Prints the receiver's summary line (sum_received). Runs in /tmp/s88/p.
B=$1; N=$2; A=$3; PS=$4; PR=$5
mkdir -p /tmp/s88/p && cd /tmp/s88/p && rm -f sock
case $A in *[A-Za-z]) AMT="-n $A";; *) AMT="-t $A";; esac
[ -n "$PS" ] && PS="perf record -F 999 -g -o $PS --"
[ -n "$PR" ] && PR="perf record -F 999 -g -o $PR --"
$PR $B/pmdt-recv --json --no-hash -N $N -i 1 $EXTRA $REXTRA --vdev net_memif0,role=server,socket=/tmp/s88/p/sock,id=0 --lcores ${RL:-0@0,1@1} --file-prefix s88r --ip 10.88.0.2 --udp-port 9000 > recv.json 2> recv.err &
R=$!
sleep 1
$PS $B/pmdt-send --json --no-hash -i 1 -P $N $AMT $EXTRA $SEXTRA --vdev net_memif0,role=client,socket=/tmp/s88/p/sock,id=0$ZC --lcores ${SL:-0@1,1@0} --file-prefix s88s --ip 10.88.0.1 -c 10.88.0.2:9000 > send.json 2> send.err
wait $R
python3 - <<'PY'
import json
t=open('/tmp/s88/p/recv.json').read(); i=t.rfind('\n{'); s=json.loads(t[i+1:] if i>=0 else t)
e=s.get('end',s)
print(json.dumps(e.get('sum_received', e))[:300])
PY
