#!/bin/bash
# kernel-share.sh <bin dir> <out dir> <cell> [run label]: Linux's own TCP
# congestion controllers (BBR, which is BBRv1 in this kernel, and CUBIC)
# sharing the path the `adapt` experiment's sharing cells use: pmdt-wanem at
# 1 Gbit/s, 20 ms each way, both directions, drop-tail queue, between two
# network namespaces joined to it by veth pairs (pmdt-wanem on DPDK's
# af_packet PMD over the root ends). Root only. Cells:
#   cj    CUBIC joins BBR 2 s later, 1 MiB, 60 s    bj  BBR joins CUBIC 2 s later, 5 MiB, 30 s
#   (short names of its own; the runner's cells are linux-tcp-bbr-and-cubic-*)
#   bvc1  together, 1 MiB, 20 s                     bvc5 together, 5 MiB, 20 s
#   solo-bbr / solo-cubic  one flow alone, 1 MiB, 20 s
# Prints one line: each flow's goodput (from its sending iperf3's
# per-second intervals) from a quarter of the run to its end, % of the link.
# Offloads are off on every veth end (the emulator forwards 1514-byte frames
# and the checksums must be whole), and the namespaces' TCP buffers reach
# 64 MiB (the default 6 MiB holds a window under the 5 MB BDP).
set -euo pipefail
BIN=$1; OUT=$2; CELL=$3; LABEL=${4:-run}
mkdir -p "$OUT"
case $CELL in
  cj)   FIRST=bbr;  SECOND=cubic; Q=1M; SECS=60; STAGGER=2 ;;
  bj)   FIRST=cubic; SECOND=bbr;  Q=5M; SECS=30; STAGGER=2 ;;
  bvc1) FIRST=bbr;  SECOND=cubic; Q=1M; SECS=20; STAGGER=0 ;;
  bvc5) FIRST=bbr;  SECOND=cubic; Q=5M; SECS=20; STAGGER=0 ;;
  solo-bbr)   FIRST=bbr;   SECOND=; Q=1M; SECS=20; STAGGER=0 ;;
  solo-cubic) FIRST=cubic; SECOND=; Q=1M; SECS=20; STAGGER=0 ;;
  *) echo "unknown cell $CELL" >&2; exit 2 ;;
esac
cleanup() {
  kill "${WPID:-}" 2>/dev/null || true; wait "${WPID:-}" 2>/dev/null || true
  ip netns pids ksB 2>/dev/null | xargs -r kill 2>/dev/null || true
  ip netns del ksA 2>/dev/null || true; ip netns del ksB 2>/dev/null || true
  ip link del kwa 2>/dev/null || true; ip link del kwb 2>/dev/null || true
}
trap cleanup EXIT
cleanup
ip netns add ksA; ip netns add ksB
ip link add kwa type veth peer name kta netns ksA
ip link add kwb type veth peer name ktb netns ksB
for ns in ksA ksB; do
  ip netns exec $ns sysctl -q -w net.ipv4.tcp_rmem="4096 131072 67108864" net.ipv4.tcp_wmem="4096 16384 67108864"
  ip -n $ns link set lo up
done
ip -n ksA addr add 10.77.0.1/24 dev kta; ip -n ksB addr add 10.77.0.2/24 dev ktb
for d in kwa kwb; do ethtool -K $d tso off gso off gro off tx off rx off >/dev/null 2>&1 || true; ip link set $d up; done
ip netns exec ksA ethtool -K kta tso off gso off gro off tx off rx off >/dev/null 2>&1 || true
ip netns exec ksB ethtool -K ktb tso off gso off gro off tx off rx off >/dev/null 2>&1 || true
ip -n ksA link set kta up; ip -n ksB link set ktb up
"$BIN/pmdt-wanem" --vdev net_af_packet0,iface=kwa --vdev net_af_packet1,iface=kwb \
  --delay-ms 20 --rate 1000000000 --queue-bytes $Q --json > "$OUT/$CELL-$LABEL-wanem.json" 2> "$OUT/$CELL-$LABEL-wanem.err" &
WPID=$!
for i in $(seq 1 100); do ip netns exec ksA ping -c1 -W1 10.77.0.2 >/dev/null 2>&1 && break; sleep 0.2; done
ip netns exec ksA ping -c3 -i0.2 10.77.0.2 | tail -1 > "$OUT/$CELL-$LABEL-ping.txt"
ip netns exec ksB taskset -c 1 iperf3 -s -p 5301 -1 > /dev/null 2>&1 &
ip netns exec ksB taskset -c 1 iperf3 -s -p 5302 -1 > /dev/null 2>&1 &
sleep 0.5
ip netns exec ksA taskset -c 1 iperf3 -c 10.77.0.2 -p 5301 -C $FIRST -t $((SECS + STAGGER)) -i 1 -J > "$OUT/$CELL-$LABEL-first.json" &
C1=$!
if [ -n "$SECOND" ]; then
  sleep $STAGGER
  ip netns exec ksA taskset -c 1 iperf3 -c 10.77.0.2 -p 5302 -C $SECOND -t $SECS -i 1 -J > "$OUT/$CELL-$LABEL-second.json" &
  C2=$!
  wait $C2
fi
wait $C1
python3 - "$OUT" "$CELL" "$LABEL" "$FIRST" "${SECOND:-}" "$SECS" "$STAGGER" <<'PY'
import json, sys
out, cell, label, first, second, secs, stagger = sys.argv[1:]
secs, stagger = int(secs), int(stagger)
start, end = secs / 4.0 + stagger, secs + stagger   # in the first flow's time
def share(path, offset):
    j = json.load(open(path))
    bits = 0.0
    for iv in j["intervals"]:
        s = iv["sum"]; t0 = s["start"] + offset; t1 = s["end"] + offset
        lo, hi = max(t0, start), min(t1, end)
        if hi > lo:
            bits += s["bits_per_second"] * (hi - lo)
    return 100.0 * bits / (end - start) / 1e9, j["end"]["sum_sent"].get("retransmits")
names = [first] + ([second] if second else [])
parts = []
for n, f, off in zip(names, ["first", "second"], [0, stagger]):
    pct, retr = share(f"{out}/{cell}-{label}-{f}.json", off)
    parts.append(f"{n} {pct:.1f}% (retransmits {retr})")
print(f"{cell} {label}: " + ", ".join(parts) + f" of the link from {start:.1f} to {end:.1f} s of the first flow's run")
PY
