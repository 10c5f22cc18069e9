#!/bin/bash
B=$(ls -t /tmp/tsim/release/deps/sim_adapt_cells-* | grep -v '\.d$' | head -1)
for r in "$@"; do for x in 0 2; do echo "xp$x rise+${r}ms $(PMDT_XP=$x SIM_SEED=1 SIM_RISE_MS=$r $B --ignored --nocapture bbr_drop_recover_rtt100 2>&1 | grep -E '^bbr-drop' | cut -c1-90)"; done; done
