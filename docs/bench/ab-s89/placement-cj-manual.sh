#!/bin/bash
# CUBIC joining BBR through 1 MiB (pmdt-bench's cell), pmdt-wanem on CPU $1; output dir $2
B=/tmp/s89/bin; W=$1; O=$2; mkdir -p $O; cd $O
rm -f /tmp/s89c-a.sock /tmp/s89c-b.sock
$B/pmdt-wanem --json --lcores $W --vdev net_memif0,role=server,socket=/tmp/s89c-a.sock,id=0 --vdev net_memif1,role=server,socket=/tmp/s89c-b.sock,id=0 --eal=--file-prefix=s89cw --delay-ms 20 --rate 1000000000 --queue-bytes 1M > wanem.out 2> wanem.err &
WP=$!
for i in $(seq 1 40); do grep -q "<->" wanem.err 2>/dev/null && break; sleep 0.5; done
$B/pmdt-recv --json --no-hash -N 2 -i 1 --vdev net_memif0,role=client,socket=/tmp/s89c-b.sock,id=0 --lcores 0@0,1@1 --file-prefix s89cr --ip 10.88.0.2 --udp-port 9000 > recv.out 2> recv.err &
RP=$!
for i in $(seq 1 60); do grep -q "listening on" recv.err 2>/dev/null && break; sleep 0.5; done
$B/pmdt-send --json --no-hash -i 0.2 --vdev net_memif0,role=client,socket=/tmp/s89c-a.sock,id=0 --lcores 0@1,1@0 --file-prefix s89cs --ip 10.88.0.1 -c 10.88.0.2:9000 -t 60 -P 2 --cc bbr,cubic --stagger 2 > send.out 2> send.err
sleep 2; kill -INT $RP 2>/dev/null; wait $RP; kill -INT $WP; wait $WP
python3 - <<'PY'
import json
d=json.load(open('send.out'))
tot={1:0,2:0}
for iv in d['intervals']:
    for f in iv['streams']:
        if f['start']>=15: tot[f['flow']]+=f['bytes']*8
secs=d['intervals'][-1]['streams'][0]['end']-15
b,c=tot[1]/secs/1e9*100,tot[2]/secs/1e9*100
import re
late=re.search(r'late for pacing (\d+)%',open('send.err').read())
print("bbr %.1f cubic %.1f late %s" % (b,c, late.group(1) if late else '-'))
PY
