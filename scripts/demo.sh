#!/usr/bin/env bash
# The one-host demo: pmdt-recv (memif server, 10.88.0.2:9000) and pmdt-send (memif
# client, 10.88.0.1) as two DPDK processes; sends PMDT_DEMO_BYTES (default 2G) of
# generated data and prints both summaries. Both run to completion (the tools'
# default with one queue: each side's flow thread runs its I/O loop, one core per
# side); PMDT_DEMO_MODE=pipeline runs an I/O lcore plus an application thread per
# side instead (--pipeline), slower here with one core per side (docs/RESULTS.md).
set -euo pipefail
cd "$(dirname "$0")/.."
CARGO=${CARGO:-cargo}
BYTES=${PMDT_DEMO_BYTES:-2G}
case "${PMDT_DEMO_MODE:-rtc}" in
  rtc) MODE=(); echo "demo: run-to-completion mode (the default: each side's flow thread runs its I/O loop, one core per side; faster than the pipeline on this 2-core host, docs/RESULTS.md)";;
  pipeline) MODE=(--pipeline); echo "demo: pipeline mode (--pipeline: an I/O lcore and an application thread per side)";;
  *) echo "PMDT_DEMO_MODE must be pipeline or rtc" >&2; exit 2;;
esac

"$CARGO" build --release -q -p pmdt-tools
BIN=target/release
rm -f /tmp/pmdt-demo.sock
log=$(mktemp /tmp/pmdt-demo-recv.XXXXXX)

"$BIN/pmdt-recv" "${MODE[@]}" --json >"$log.json" 2>"$log" &
recv=$!
trap 'kill $recv 2>/dev/null || true; rm -f "$log" "$log.json"' EXIT
for _ in $(seq 100); do
  grep -q "listening on" "$log" 2>/dev/null && break
  kill -0 $recv 2>/dev/null || { cat "$log" >&2; exit 1; }
  sleep 0.1
done
echo "demo: receiver up ($(grep -o 'listening on.*' "$log")); sending $BYTES"
"$BIN/pmdt-send" "${MODE[@]}" -n "$BYTES"
wait $recv
echo "demo: receiver side:"
grep -v '^EAL\|memif_probe\|^TELEMETRY\|^pmdt: EAL' "$log" | grep -v '^pmdt-recv: \[' || true
echo "demo: receiver JSON document (iperf3 -J's shape; the summary is its \"end\"):"
cat "$log.json"
