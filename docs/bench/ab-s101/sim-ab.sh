#!/bin/bash
# sim-ab.sh <cj|4j> <seeds...>: the simulator's cells with one sender on a
# shared core, the head (PMDT_XP=0) and the kept queue (1) alternated through
# the temporary toggle (kept-queue-toggle.diff), one line per run.
#   cj  CUBIC joining BBR 2 s later, both from one sender, 1 MiB, 1 Gbit/s x
#       40 ms, 60 s; the sender's core 14 ms on, 6 off (CORES overrides,
#       e.g. CORES="14,6 18,2")
#   4j  four BBR flows joining 2 s apart (one endpoint), the sender's core
#       14 ms on, 6 off
# WT: the tree (default /work/main), TGT: its target dir (default /tmp/tsim).
cd "${WT:-/work/main}"
export CARGO_TARGET_DIR=${TGT:-/tmp/tsim}
what=$1; shift
T() { cargo test -q --release -p pmdt --no-default-features --test sim_adapt_cells -- --ignored --nocapture "$@" 2>&1; }
for s in "$@"; do for core in ${CORES:-14,6}; do for x in 0 1; do case $what in
  cj) echo "xp$x core $core s$s $(PMDT_XP=$x SIM_ONE_SENDER=1 SIM_SEED=$s SIM_SENDER_CORE=$core SIM_START_EVERY_MS=2000 SIM_SHARE_SECS=60 T bbr_vs_cubic_shallow | grep -E '^bbr-vs-cubic' | sed -E 's/^.*: BBR/BBR/')" ;;
  4j) echo "xp$x s$s $(PMDT_XP=$x SIM_SENDER_CORE=$core SIM_SEED=$s T bbr_share_4_flows_joining | grep -E '^bbr-share' | sed -E 's/^.*Jain/Jain/; s/, queue verdicts.*//')" ;;
  *) echo "sim-ab.sh: cj or 4j, not $what" >&2; exit 2 ;;
esac; done; done; done
