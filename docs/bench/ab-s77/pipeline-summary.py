#!/usr/bin/env python3
"""Prints each run of docs/bench/ab-s77/pipeline-ab.sh: goodput, flows that
failed, when the last flow was done (or the timeout), per cell and build.
Usage: pipeline-summary.py OUT (the A/B's output directory)."""
import glob
import json
import sys

out = sys.argv[1] if len(sys.argv) > 1 else "/tmp/s77/abp"
for d in sorted(glob.glob(f"{out}/*-[0-9]")):
    run = d.rsplit("/", 1)[-1]
    for c in json.load(open(f"{d}/flows.json"))["cells"]:
        m = c["metrics"]
        med = lambda k: (m.get(k) or {}).get("median")
        if c.get("status") == "ok":
            print(f"{run:8} {c['name']:24} {med('goodput_gbps'):6.2f} Gbit/s, "
                  f"failed {med('flows_failed') or 0:.0f}, last done {med('completion_max_s'):.1f} s")
        else:
            print(f"{run:8} {c['name']:24} {c.get('status')}: {(c.get('errors') or [''])[0][:110]}")
