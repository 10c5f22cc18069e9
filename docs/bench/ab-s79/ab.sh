#!/bin/bash
# ab.sh BIN OUT N SECS EXTRA... : N flows for SECS s over memif, EXTRA on both tools; prints goodput and last flow's end
B=$1; O=$2; N=$3; T=$4; shift 4
mkdir -p $O; rm -f /tmp/ab1k.sock
$B/pmdt-recv --json --no-hash -N $N -i 1 --vdev net_memif0,role=server,socket=/tmp/ab1k.sock,id=0 --lcores 0@0,1@1 --file-prefix ab1kr --ip 10.88.0.2 --udp-port 9000 "$@" > $O/recv.out 2> $O/recv.err &
RP=$!
sleep 1.5
$B/pmdt-send --json --no-hash -i 1 --vdev net_memif0,role=client,socket=/tmp/ab1k.sock,id=0 --lcores 0@1,1@0 --file-prefix ab1ks --ip 10.88.0.1 -c 10.88.0.2:9000 -P $N -t $T "$@" $SENDX > $O/send.out 2> $O/send.err
wait $RP
python3 - $O <<'PY'
import json,sys
d=json.load(open(sys.argv[1]+'/send.out'))
fl=d['flows']
ends=[f.get('started_s',0)+f['seconds'] for f in fl]
cs=d['start'].get('connect_seconds',0)
print(f"connect {cs:.2f} gbps {d['goodput_bps']/1e9:.2f} flows {len(fl)} last_end {max(ends):.2f} link {d['start']['link']} failed {sum(1 for f in fl if f.get('error'))}")
PY
