#!/bin/bash
# Session 77: writers short of packet memory park until the I/O loop frees
# some (NEW: tools built with it) alternated with the head before it (HEAD:
# 4d9fa6a's pmdt-send/pmdt-recv, the same pmdt-bench), the flows experiment's
# pipeline cells (256 and 1000 flows for 5 s, --pipeline on both tools), one
# run each per pass.
NEW=${NEW:-/tmp/s77/bin-new}
HEAD=${HEAD:-/tmp/s77/bin-old}
OUT=${OUT:-/tmp/s77/abp}
PASSES=${PASSES:-"1 2 3"}
"$(dirname "$0")/../ab-s76/alternate.sh" "$OUT" "$PASSES" new "$NEW" head "$HEAD" -- \
  --only flows-pipeline flows
