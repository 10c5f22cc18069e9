#!/bin/bash
# j4.sh <label> <seeds...>: 4 flows joining, sender off its core 6 ms in 20 (sim_core_share's cell)
B=$(ls -t /tmp/tsim/release/deps/sim_adapt_cells-* | grep -v '\.d$' | head -1)
L=$1; shift
for s in "$@"; do SIM_SEED=$s SIM_SENDER_CORE=${SC:-14,6} $B --ignored --nocapture --exact bbr_share_4_flows_joining 2>&1 | grep -E "^bbr-share" | sed -E "s/^.*Jain/$L 4j s$s: Jain/; s/, queue verdicts.*//"; done
