#!/bin/bash
# sim adapt cells + loss grid seed 1 into $1 (env passes through)
cd /work/main; OUT=$1; mkdir -p $OUT
cargo test -q --release -p pmdt --no-default-features --test sim_adapt_cells -- --ignored --nocapture --test-threads 1 > $OUT/adapt.txt 2>&1
SIM_SEED=1 cargo test -q --release -p pmdt --no-default-features --test sim_loss_grid -- --ignored --nocapture > $OUT/grid.txt 2>&1
