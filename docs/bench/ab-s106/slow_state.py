#!/usr/bin/env python3
"""slow_state.py <run dir>...: for each pmdt-bench --out directory, one line
per cell: Jain (or the BBR share), the link's use, and the VM's state (the
metrics every pmdt-bench run carries: `slow_state_share`, the share of the
core-to-core round trips measured during the run that found the machine's
slow state; `core_round_trip_ns`, the round trip around the run)."""
import csv, glob, os, sys

for o in sys.argv[1:]:
    rows = list(csv.DictReader(open(glob.glob(f"{o}/*.csv")[0])))
    for cell in sorted({r["cell"] for r in rows}):
        m = {r["metric"]: float(r["median"]) for r in rows if r["cell"] == cell}
        share = f"jain {m['jain']:.4f}" if "jain" in m else f"bbr {m['bbr_pct']:.1f}%"
        print(f"{os.path.basename(o.rstrip('/'))} {cell}: {share} "
              f"of_link {m.get('of_link_pct', 0):.1f}% "
              f"slow_state_share {m['slow_state_share']:.3f} "
              f"core_round_trip_ns {m['core_round_trip_ns']:.0f}")
