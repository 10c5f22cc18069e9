#!/usr/bin/env python3
"""cells.py <run dir>...: one line per cell of each run directory (pmdt-bench
--out), the sharing cells' shares or Jain and the link's use."""
import csv, glob, os, sys
for o in sys.argv[1:]:
    for f in sorted(glob.glob(f"{o}/*.csv")):
        rows = list(csv.DictReader(open(f)))
        for cell in sorted({r["cell"] for r in rows}):
            m = {r["metric"]: float(r["median"]) for r in rows if r["cell"] == cell}
            name = os.path.basename(o.rstrip("/"))
            if "bbr_pct" in m:
                print(f"{name} {cell}: bbr {m['bbr_pct']:.1f}% cubic {m['cubic_pct']:.1f}%")
            elif "jain" in m:
                print(f"{name} {cell}: jain {m['jain']:.4f} of_link {m.get('of_link_pct', 0):.1f}%")
