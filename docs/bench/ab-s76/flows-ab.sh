#!/bin/bash
# Session 76: the BBR pacing floor (NEW: tools built with it) alternated with
# the head before it (HEAD), four passes of the flows experiment's 1-, 16-,
# 256- and 1000-flow cells, one run each; flows-summary.py prints the runs.
NEW=${NEW:-/tmp/s76/binf}
HEAD=${HEAD:-/tmp/s76/bin}
OUT=${OUT:-/tmp/s76/abf}
"$(dirname "$0")/alternate.sh" "$OUT" "1 2 3 4" new "$NEW" head "$HEAD" -- \
  --only flows-256 --only flows-1000 --only flows-1 flows
