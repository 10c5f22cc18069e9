#!/bin/bash
# screen5.sh <label> <seeds...>: BBR beside CUBIC together (1 and 5 MiB), BBR joining CUBIC (5 MiB)
cd /tmp/s92/wt2
export CARGO_TARGET_DIR=/tmp/s92/tgt2
L=$1; shift
T() { cargo test -q --release -p pmdt --no-default-features --test sim_adapt_cells -- --ignored --nocapture "$@" 2>&1; }
for s in "$@"; do
  SIM_SEED=$s T bbr_vs_cubic_shallow | grep -E "^bbr-vs-cubic" | sed -E "s/^.*: BBR/$L bvc1 s$s: BBR/"
  SIM_SEED=$s T bbr_vs_cubic_deep | grep -E "^bbr-vs-cubic" | sed -E "s/^.*: BBR/$L bvc5 s$s: BBR/"
  SIM_SEED=$s T bbr_joining_cubic | grep -E "^bbr-vs-cubic" | sed -E "s/^.*: BBR/$L bj s$s: BBR/"
done
