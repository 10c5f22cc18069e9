#!/bin/bash
# sim-screen.sh <seeds...>: the simulator's cells, one line each, for each
# PMDT_XP arm in ARMS (default "0 1"); CELLS picks (see README.md).
B=$(ls -t /tmp/tsim/release/deps/sim_adapt_cells-* | grep -v '\.d$' | head -1)
T() { $B --ignored --nocapture "$@" 2>&1; }
for s in "$@"; do for c in ${CELLS:-cj cjc 4j 4t}; do for x in ${ARMS:-0 1}; do export PMDT_XP=$x; L=xp$x; case $c in
  cj) SIM_ONE_SENDER=1 SIM_SEED=$s SIM_START_EVERY_MS=2000 SIM_SHARE_SECS=60 T bbr_vs_cubic_shallow | grep -E "^bbr-vs-cubic" | sed -E "s/^.*: BBR/$L cj s$s: BBR/" ;;
  cjc) SIM_ONE_SENDER=1 SIM_SEED=$s SIM_SENDER_CORE=14,6 SIM_START_EVERY_MS=2000 SIM_SHARE_SECS=60 T bbr_vs_cubic_shallow | grep -E "^bbr-vs-cubic" | sed -E "s/^.*: BBR/$L cjc s$s: BBR/" ;;
  4j) SIM_SEED=$s T bbr_share_4_flows_joining | grep -E "^bbr-share" | sed -E "s/^.*Jain/$L 4j s$s: Jain/; s/, queue verdicts.*//" ;;
  4t) SIM_SEED=$s T bbr_share_4_flows --exact | grep -E "^bbr-share" | sed -E "s/^.*Jain/$L 4t s$s: Jain/; s/, queue verdicts.*//" ;;
  dr) for r in 40 100; do SIM_SEED=$s T bbr_drop_recover_rtt$r | grep -E "^bbr-drop" | cut -c1-140 | sed "s/^/$L dr$r s$s: /"; done ;;
  bvc) SIM_SEED=$s T bbr_vs_cubic_shallow | grep -E "^bbr-vs-cubic" | sed -E "s/^.*: BBR/$L bvc1 s$s: BBR/"
       SIM_SEED=$s T bbr_vs_cubic_deep | grep -E "^bbr-vs-cubic" | sed -E "s/^.*: BBR/$L bvc5 s$s: BBR/"
       SIM_SEED=$s T bbr_joining_cubic | grep -E "^bbr-vs-cubic" | sed -E "s/^.*: BBR/$L bj s$s: BBR/" ;;
esac; done; done; done
