#!/bin/bash
# one flow over memif, -n bytes; perf on sender ($1) and receiver ($2) if given
B=${B:-/tmp/s88/bin}
rm -f /tmp/s88/p/sock
PR=""; [ -n "$2" ] && PR="perf record -F 1999 -g -o $2 --"
PS=""; [ -n "$1" ] && PS="perf record -F 1999 -g -o $1 --"
$PR $B/pmdt-recv --json --no-hash -N 1 $REXTRA --vdev net_memif0,role=server,socket=/tmp/s88/p/sock,id=0 --lcores 0@0,1@1 --file-prefix s88r --ip 10.88.0.2 --udp-port 9000 > recv1.json 2> recv1.err &
R=$!
sleep 1
$PS $B/pmdt-send --json --no-hash -n ${BYTES:-4G} $SEXTRA --vdev net_memif0,role=client,socket=/tmp/s88/p/sock,id=0 --lcores 0@1,1@0 --file-prefix s88s --ip 10.88.0.1 -c 10.88.0.2:9000 > send1.json 2> send1.err
wait $R
python3 - <<'PY'
import json
t=open('/tmp/s88/p/send1.json').read(); d=json.loads(t[t.find('{'):])
print(round(d['goodput_bps']/1e9,2), 'Gbit/s; send io load', d.get('load',{}) if not isinstance(d.get('load'),dict) else {k:v for k,v in d['load'].items() if 'mean' in k})
PY
