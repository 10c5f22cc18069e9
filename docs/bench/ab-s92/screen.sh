#!/bin/bash
# screen.sh <label> <seeds...>: the simulator's sharing cells, one line each.
# WT: the tree to run (default /work/main), TGT: its target dir; XP_* toggles
# from xp-climb.diff pass through; ARMS runs each cell once per PMDT_XP value
# given, the arm after the label (session 102). CELLS picks the cells
# (default "cj 4j 4t"):
#   cj   CUBIC joining BBR, 1 MiB, 60 s, one sender whose core runs 18 ms of 20
#   cj0  the same, the sender on a core of its own
#   cjc  the same, the sender's core 14 ms of 20
#   4j   four BBR flows joining 2 s apart      4t  four BBR flows together
#   dr   drop and recover at 40 and 100 ms
#   bvc  BBR and CUBIC together (1 and 5 MiB), BBR joining CUBIC (5 MiB)
cd "${WT:-/work/main}"
export CARGO_TARGET_DIR=${TGT:-$PWD/target}
L0=$1; shift
T() { cargo test -q --release -p pmdt --no-default-features --test sim_adapt_cells -- --ignored --nocapture "$@" 2>&1; }
for s in "$@"; do for c in ${CELLS:-cj 4j 4t}; do for x in ${ARMS:--}; do
if [ "$x" = - ]; then L=$L0; else export PMDT_XP=$x; L="$L0 xp$x"; fi
case $c in
  cj|cj0|cjc) ( case $c in cj) export SIM_SENDER_CORE=18,2 ;; cjc) export SIM_SENDER_CORE=14,6 ;; esac
      SIM_ONE_SENDER=1 SIM_SEED=$s SIM_START_EVERY_MS=2000 SIM_SHARE_SECS=60 T bbr_vs_cubic_shallow ) \
        | grep -E "^bbr-vs-cubic" | sed -E "s/^.*: BBR/$L $c s$s: BBR/" ;;
  4j) SIM_SEED=$s T bbr_share_4_flows_joining | grep -E "^bbr-share" | sed -E "s/^.*Jain/$L 4j s$s: Jain/; s/, queue verdicts.*//" ;;
  4t) SIM_SEED=$s T bbr_share_4_flows --exact | grep -E "^bbr-share" | sed -E "s/^.*Jain/$L 4t s$s: Jain/; s/, queue verdicts.*//" ;;
  dr) for r in 40 100; do SIM_SEED=$s T bbr_drop_recover_rtt$r | grep -E "^bbr-drop" | cut -c1-140 | sed "s/^/$L dr$r s$s: /"; done ;;
  bvc) SIM_SEED=$s T bbr_vs_cubic_shallow | grep -E "^bbr-vs-cubic" | sed -E "s/^.*: BBR/$L bvc1 s$s: BBR/"
       SIM_SEED=$s T bbr_vs_cubic_deep | grep -E "^bbr-vs-cubic" | sed -E "s/^.*: BBR/$L bvc5 s$s: BBR/"
       SIM_SEED=$s T bbr_joining_cubic | grep -E "^bbr-vs-cubic" | sed -E "s/^.*: BBR/$L bj s$s: BBR/" ;;
esac; done; done; done
