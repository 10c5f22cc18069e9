#!/bin/bash
# CUBIC joining BBR through 1 MiB in the simulator, one sender, core 18/2; seeds from args
cd /work/main
for s in "$@"; do
  SIM_ONE_SENDER=1 SIM_SEED=$s SIM_SENDER_CORE=18,2 SIM_START_EVERY_MS=2000 SIM_SHARE_SECS=${SECS:-30} \
    cargo test -q --release -p pmdt --no-default-features --test sim_adapt_cells -- --ignored --nocapture bbr_vs_cubic_shallow 2>&1 | grep -E "BBR|bbr.*%" | head -2 | sed "s/^/seed $s: /"
done
