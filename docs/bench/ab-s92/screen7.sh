#!/bin/bash
cd ${WT:-/work/main}
export CARGO_TARGET_DIR=${TGT:-/work/main/target}
L=$1; shift
T() { cargo test -q --release -p pmdt --no-default-features --test sim_adapt_cells -- --ignored --nocapture "$@" 2>&1; }
for s in "$@"; do
  SIM_SEED=$s T bbr_share_4_flows_joining | grep -E "^bbr-share" | sed -E "s/^.*Jain/$L 4j s$s: Jain/" | cut -c1-90
done
