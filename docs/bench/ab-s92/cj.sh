#!/bin/bash
# cj.sh label seeds... (env XP_* passed through); runs in /tmp/s92/wt
cd /tmp/s92/wt
for s in "$@"; do
  CARGO_TARGET_DIR=/tmp/s92/tgt SIM_ONE_SENDER=1 SIM_SEED=$s SIM_SENDER_CORE=18,2 SIM_START_EVERY_MS=2000 SIM_SHARE_SECS=60 cargo test -q --release -p pmdt --no-default-features --test sim_adapt_cells -- --ignored --nocapture bbr_vs_cubic_shallow 2>&1 | grep "^bbr-vs" | sed "s/^.*from 2s: /$LABEL seed $s: /"
done
