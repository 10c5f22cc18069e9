#!/bin/bash
# stag.sh <label> <join_ms...>: the simulator's CUBIC-joining cell (1 Gbit/s ×
# 40 ms, 1 MiB, one sender on 18 ms of 20) at several join times, seed
# ${SEED:-1}, one line each. RC=on,off takes the receiver off its core too;
# TRACE=1 also keeps each run's SIM_TRACE timeline in ${OUT:-/tmp}/tr-<label>-<join_ms>.txt.
# WT, TGT: the tree and its target directory; SECS: the run's length (60).
cd "${WT:-/work/main}"
export CARGO_TARGET_DIR=${TGT:-/tmp/tsim}
L=$1; shift
[ -n "$RC" ] && export SIM_RECEIVER_CORE=$RC
[ "$TRACE" = 1 ] && export SIM_TRACE=1
for st in "$@"; do
  out=/dev/null; [ "$TRACE" = 1 ] && out=${OUT:-/tmp}/tr-$L-$st.txt
  SIM_ONE_SENDER=1 SIM_SEED=${SEED:-1} SIM_SENDER_CORE=18,2 SIM_START_EVERY_MS=$st SIM_SHARE_SECS=${SECS:-60} \
   cargo test -q --release -p pmdt --no-default-features --test sim_adapt_cells -- --ignored --nocapture bbr_vs_cubic_shallow 2>&1 \
   | tee "$out" | grep -E "^bbr-vs-cubic" | sed -E "s/^.*: BBR/$L st$st: BBR/"
done
