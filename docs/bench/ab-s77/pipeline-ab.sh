#!/bin/bash
# Session 77: writers short of packet memory park until the I/O loop frees
# some, and parked threads' safety-net timeouts keep their doublings (NEW:
# tools built from e7105ff) alternated with the head before them (HEAD:
# 4d9fa6a's pmdt-send/pmdt-recv, e7105ff's pmdt-bench), the flows
# experiment's pipeline cells (256 and 1000 flows for 5 s, --pipeline on both
# tools), one run each per pass.
NEW=${NEW:-/tmp/s77/bin-new2}
HEAD=${HEAD:-/tmp/s77/bin-old}
OUT=${OUT:-/tmp/s77/abp}
PASSES=${PASSES:-"1 2 3"}
"$(dirname "$0")/../ab-s76/alternate.sh" "$OUT" "$PASSES" new "$NEW" head "$HEAD" -- \
  --only flows-pipeline flows
