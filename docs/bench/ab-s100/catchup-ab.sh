#!/bin/bash
# catchup-ab.sh <cj|others|rtt10> <bin dir> <out dir> N: the pacer's catch-up
# bound alternated pass by pass through one build with a temporary toggle
# (pacer-toggle.diff, PMDT_XP): 0 the head (a late sender makes up to a round
# trip, at most 20 ms), 8 at most 1 ms, 9 at most 5 ms. ARMS picks the arms
# (default "0 8"; rtt10-ab.txt's runs: ARMS="9 0").
#   cj      CUBIC joining BBR through 1 MiB (`--only bbr-vs-cubic-cubic-joins
#           adapt`): BBR's and CUBIC's shares, pmdt-wanem's overflow episodes
#           (all, and after 5 s)
#   others  the loss grid's 1 Gbit/s row of the default controller (a flow
#           alone, `--only bbr-1gbit loss`) and the four-flow sharing cells
#           (`--only bbr-share-4 adapt`)
#   rtt10   the loss grid's 1 Gbit/s × 10 ms cells (`--only bbr-1gbit-rtt10- loss`)
#   runs    the runs given after N, each "<only> <experiment>", their output
#           directories named by the `--only` (session 101's share-ab.txt:
#           ARMS="0 1" catchup-ab.sh runs B O 2 "bbr-share-4 adapt"
#           "bbr-vs-cubic adapt", with docs/bench/ab-s101's toggle)
# One line per cell and run.
set -uo pipefail
WHAT=$1; BIN=$2; OUT=$3; N=$4; ARMS=${ARMS:-0 8}; shift 4
NAME=2 # the output directories: by experiment, or by `--only` (runs)
case $WHAT in
  cj) RUNS=("bbr-vs-cubic-cubic-joins adapt") ;;
  others) RUNS=("bbr-1gbit loss" "bbr-share-4 adapt") ;;
  rtt10) RUNS=("bbr-1gbit-rtt10- loss") ;;
  runs) RUNS=("$@"); NAME=1 ;;
  *) echo "catchup-ab.sh: cj, others, rtt10 or runs, not $WHAT" >&2; exit 2 ;;
esac
mkdir -p "$OUT"
for p in $(seq 1 "$N"); do
  for x in $ARMS; do
    for run in "${RUNS[@]}"; do
      set -- $run
      o="$OUT/xp$x-p$p-${!NAME}"
      PMDT_XP=$x "$BIN/pmdt-bench" --bin-dir "$BIN" --out "$o" --repeat 1 --only "$1" "$2" > "$o.log" 2>&1
      python3 - "$o" "$2" "$x" "$p" <<'PY'
import csv, glob, re, sys
o, exp, x, p = sys.argv[1:]
rows = list(csv.DictReader(open(f"{o}/{exp}.csv")))
for cell in sorted({r["cell"] for r in rows}):
    m = {r["metric"]: float(r["median"]) for r in rows if r["cell"] == cell}
    if "bbr_pct" in m:
        eps = late = 0
        for f in glob.glob(f"{o}/logs/*/wanem.err"):
            for l in open(f):
                g = re.search(r"overflow at ([\d.]+) s ", l)
                if g:
                    eps += 1
                    late += float(g.group(1)) > 5
        print(f"xp{x} p{p}: bbr {m['bbr_pct']:.1f}% cubic {m['cubic_pct']:.1f}%, episodes {eps}, after 5 s {late}")
    elif "steady_pct" in m:
        print(f"xp{x} p{p} {cell}: steady {m['steady_pct']:.2f} of_link {m['of_link_pct']:.2f}")
    else:
        print(f"xp{x} p{p} {cell}: jain {m['jain']:.4f}")
PY
    done
  done
done
