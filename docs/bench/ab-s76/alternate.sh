#!/bin/bash
# Runs two builds' pmdt-bench alternately, one run per cell per pass, each with
# its own tools: results in OUT/NAME-PASS (NAME-PASS.log beside).
#   alternate.sh OUT "PASSES" NAME1 BIN1 NAME2 BIN2 -- PMDT_BENCH_ARGS...
OUT=$1; PASSES=$2; N1=$3; B1=$4; N2=$5; B2=$6; shift 7
mkdir -p "$OUT"
for i in $PASSES; do
  for side in "$N1=$B1" "$N2=$B2"; do
    name=${side%%=*}; B=${side#*=}
    "$B/pmdt-bench" --bin-dir "$B" --out "$OUT/$name-$i" --repeat 1 "$@" > "$OUT/$name-$i.log" 2>&1
  done
done
