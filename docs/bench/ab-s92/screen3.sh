#!/bin/bash
# screen2.sh <label> : cj (60 s, one sender, core 18/2), 4 joining, 4 together; seeds 1-4; in /tmp/s92/wt, XP_* from env
cd /tmp/s92/wt2
export CARGO_TARGET_DIR=/tmp/s92/tgt2
T() { cargo test -q --release -p pmdt --no-default-features --test sim_adapt_cells -- --ignored --nocapture "$@" 2>&1; }
for s in 1 2 3 4; do
  SIM_ONE_SENDER=1 SIM_SEED=$s SIM_SENDER_CORE=18,2 SIM_START_EVERY_MS=2000 SIM_SHARE_SECS=60 T bbr_vs_cubic_shallow | grep -E "^bbr-vs-cubic" | sed -E "s/^.*: BBR/$1 cj s$s: BBR/"
done
for s in 1 2 3 4; do
  SIM_SEED=$s T bbr_share_4_flows_joining | grep -E "^bbr-share" | sed -E "s/^.*Jain/$1 4j s$s: Jain/"
  SIM_SEED=$s T bbr_share_4_flows --exact | grep -E "^bbr-share" | sed -E "s/^.*Jain/$1 4t s$s: Jain/"
done
