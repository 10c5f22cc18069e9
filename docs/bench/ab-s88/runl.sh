#!/bin/bash
# usage: run1000.sh BIN N SECS [perf-out-send]
B=$1; N=$2; T=$3; P=$4
rm -f /tmp/s88/p/sock
$B/pmdt-recv --json --no-hash -N $N -i 1 $EXTRA --vdev net_memif0,role=server,socket=/tmp/s88/p/sock,id=0 --lcores $RL --file-prefix s88r --ip 10.88.0.2 --udp-port 9000 > recv.json 2> recv.err &
R=$!
sleep 1
if [ -n "$P" ]; then PF="perf record -F 999 -g -o $P --"; fi
$PF $B/pmdt-send --json --no-hash -i 1 -P $N -t $T $EXTRA --vdev net_memif0,role=client,socket=/tmp/s88/p/sock,id=0 --lcores $SL --file-prefix s88s --ip 10.88.0.1 -c 10.88.0.2:9000 > send.json 2> send.err
wait $R
python3 - <<'PY'
import json
def last(f):
    t=open(f).read(); i=t.rfind('\n{'); return json.loads(t[i+1:] if i>=0 else t)
s=last('/tmp/s88/p/recv.json')
e=s.get('end',s)
print(json.dumps(e.get('sum_received', e))[:300])
PY
