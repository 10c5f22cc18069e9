#!/usr/bin/env python3
"""pmdt-wanem --log-overflows lines of one run, the flows named in the order they
first overflowed the queue (in CUBIC joining BBR, BBR's Startup overflows first:
flow 1 is BBR, flow 2 CUBIC). Usage: overflows.py <wanem.err>"""
import re
import sys

LINE = re.compile(r"A->B overflow at ([0-9.]+) s for ([0-9.]+) ms: (.*)")
FLOW = re.compile(r"(.+?) dropped (\d+) of (\d+)")
names = {}
rows = []
for line in open(sys.argv[1]):
    m = LINE.search(line)
    if not m:
        continue
    at, lasted, rest = float(m.group(1)), float(m.group(2)), m.group(3)
    per = {}
    for part in rest.split("; "):
        f = FLOW.match(part)
        if not f:
            continue
        key = f.group(1)
        names.setdefault(key, len(names) + 1)
        per[names[key]] = (int(f.group(2)), int(f.group(3)))
    rows.append((at, lasted, per))
print("at_s   ms     " + "  ".join(f"flow{n}_dropped/offered" for n in sorted(names.values())) + "  flow2_share_of_offered")
for at, lasted, per in rows:
    cells = "  ".join(f"{per.get(n, (0, 0))[0]:>7}/{per.get(n, (0, 0))[1]:<9}" for n in sorted(names.values()))
    off = sum(o for _, o in per.values())
    share = per.get(2, (0, 0))[1] / off if off else 0
    print(f"{at:7.3f} {lasted:5.1f}  {cells}  {share:.2f}")
tot = {n: sum(r[2].get(n, (0, 0))[0] for r in rows) for n in sorted(names.values())}
print("episodes", len(rows), "drops by flow", tot,
      "episodes with flow-2 drops after 5 s", sum(1 for r in rows if r[0] > 5 and r[2].get(2, (0, 0))[0] > 0))
