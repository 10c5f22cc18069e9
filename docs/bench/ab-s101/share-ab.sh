#!/bin/bash
# share-ab.sh <bin dir> <out dir> N "<only> <experiment>"...: catchup-ab.sh (docs/bench/ab-s100) with
# the runs from the arguments, each pass the arms in ARMS (default "0 1": the head, the
# kept queue; kept-queue-toggle.diff). This session: share-ab.sh B O 2 "bbr-share-4 adapt" "bbr-vs-cubic adapt".
# One line per cell and run.
set -uo pipefail
BIN=$1; OUT=$2; N=$3; ARMS=${ARMS:-0 1}; shift 3; RUNS=("$@")
mkdir -p "$OUT"
for p in $(seq 1 "$N"); do
  for x in $ARMS; do
    for run in "${RUNS[@]}"; do
      set -- $run
      o="$OUT/xp$x-p$p-$1"
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
