#!/usr/bin/env python3
"""episodes.py <run dir>...: for each pmdt-bench --out directory of the CUBIC
joining BBR cell, BBR's and CUBIC's shares of the link from 15 s and how many
times pmdt-wanem's queue overflowed (all, and after the first 5 s)."""
import csv, glob, os, re, sys

for o in sys.argv[1:]:
    eps = late = 0
    for f in glob.glob(f"{o}/logs/*/wanem.err"):
        for line in open(f):
            g = re.search(r"overflow at ([\d.]+) s ", line)
            if g:
                eps += 1
                late += float(g.group(1)) > 5
    rows = list(csv.DictReader(open(glob.glob(f"{o}/*.csv")[0])))
    m = {r["metric"]: float(r["median"]) for r in rows}
    name = os.path.basename(o.rstrip("/"))
    print(f"{name} bbr {m['bbr_pct']:.1f}% cubic {m['cubic_pct']:.1f}%, "
          f"episodes {eps}, after 5 s {late}")
