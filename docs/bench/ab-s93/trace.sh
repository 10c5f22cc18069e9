#!/bin/bash
# trace.sh <label> <stagger_ms...>: traced cj runs with receiver core ${RC:-18,2}
cd "${WT:-/work/main}"; export CARGO_TARGET_DIR=${TGT:-/tmp/tsim}
L=$1; shift
for st in "$@"; do
 SIM_TRACE=1 SIM_ONE_SENDER=1 SIM_SEED=${SEED:-1} SIM_SENDER_CORE=18,2 SIM_RECEIVER_CORE=${RC:-18,2} SIM_START_EVERY_MS=$st SIM_SHARE_SECS=${SECS:-60} \
   cargo test -q --release -p pmdt --no-default-features --test sim_adapt_cells -- --ignored --nocapture bbr_vs_cubic_shallow > ${OUT:-/tmp}/tr-$L-$st.txt 2>&1
done
