#!/usr/bin/env bash
# The one-host demo: pmdt-recv (memif server, 10.88.0.2:9000, I/O lcore on CPU 1)
# and pmdt-send (memif client, 10.88.0.1, I/O lcore on CPU 0) as two DPDK processes;
# sends PMDT_DEMO_BYTES (default 2G) of generated data and prints both summaries.
set -euo pipefail
cd "$(dirname "$0")/.."
CARGO=${CARGO:-cargo}
BYTES=${PMDT_DEMO_BYTES:-2G}

"$CARGO" build --release -q -p pmdt-tools
BIN=target/release
rm -f /tmp/pmdt-demo.sock
log=$(mktemp /tmp/pmdt-demo-recv.XXXXXX)

"$BIN/pmdt-recv" --json >"$log.json" 2>"$log" &
recv=$!
trap 'kill $recv 2>/dev/null || true; rm -f "$log" "$log.json"' EXIT
for _ in $(seq 100); do
  grep -q "listening on" "$log" 2>/dev/null && break
  kill -0 $recv 2>/dev/null || { cat "$log" >&2; exit 1; }
  sleep 0.1
done
echo "demo: receiver up ($(grep -o 'listening on.*' "$log")); sending $BYTES"
"$BIN/pmdt-send" -n "$BYTES"
wait $recv
echo "demo: receiver side:"
grep -v '^EAL\|memif_probe\|^TELEMETRY\|^pmdt: EAL' "$log" | grep -v '^pmdt-recv: \[' || true
echo "demo: receiver JSON document (iperf3 -J's shape; the summary is its \"end\"):"
cat "$log.json"
