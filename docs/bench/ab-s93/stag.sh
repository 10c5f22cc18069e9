#!/bin/bash
# stag.sh <label> <stagger_ms...>: cj sim cell at several join times, seed ${SEED:-1}
cd "${WT:-/work/main}"
export CARGO_TARGET_DIR=${TGT:-/tmp/tsim}
L=$1; shift
[ -n "$RC" ] && export SIM_RECEIVER_CORE=$RC
for st in "$@"; do
  SIM_ONE_SENDER=1 SIM_SEED=${SEED:-1} SIM_SENDER_CORE=18,2 SIM_START_EVERY_MS=$st SIM_SHARE_SECS=60 \
   cargo test -q --release -p pmdt --no-default-features --test sim_adapt_cells -- --ignored --nocapture bbr_vs_cubic_shallow 2>&1 \
   | grep -E "^bbr-vs-cubic" | sed -E "s/^.*: BBR/$L st$st: BBR/"
done
