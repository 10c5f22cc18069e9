#!/bin/bash
# screen4.sh <label> <seeds...>: cj, 4j, 4t on the given seeds, in /tmp/s92/wt2 (XP_* from env)
cd ${WT:-/work/main}
export CARGO_TARGET_DIR=${TGT:-/work/main/target}
L=$1; shift
T() { cargo test -q --release -p pmdt --no-default-features --test sim_adapt_cells -- --ignored --nocapture "$@" 2>&1; }
for s in "$@"; do
  SIM_ONE_SENDER=1 SIM_SEED=$s SIM_SENDER_CORE=18,2 SIM_START_EVERY_MS=2000 SIM_SHARE_SECS=60 T bbr_vs_cubic_shallow | grep -E "^bbr-vs-cubic" | sed -E "s/^.*: BBR/$L cj s$s: BBR/"
  SIM_SEED=$s T bbr_share_4_flows_joining | grep -E "^bbr-share" | sed -E "s/^.*Jain/$L 4j s$s: Jain/"
  SIM_SEED=$s T bbr_share_4_flows --exact | grep -E "^bbr-share" | sed -E "s/^.*Jain/$L 4t s$s: Jain/"
done
for s in "$@"; do
  SIM_SEED=$s T bbr_drop_recover_rtt40 | grep -E "^bbr-drop" | cut -c1-140 | sed "s/^/$L dr40 s$s: /"
  SIM_SEED=$s T bbr_drop_recover_rtt100 | grep -E "^bbr-drop" | cut -c1-140 | sed "s/^/$L dr100 s$s: /"
done
