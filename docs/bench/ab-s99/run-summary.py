#!/usr/bin/env python3
"""One line per CUBIC-joining-BBR run directory (pmdt-bench --out DIR): BBR's
share, CUBIC's window at 3 s (a second after it starts; send.out's interval
reports), its most, the overflow episodes pmdt-wanem logged after 5 s
and how many of them dropped CUBIC's frames. Usage: run-summary.py DIR..."""
import glob
import json
import re
import sys

for d in sys.argv[1:]:
    share = next((l.split(",")[5] for l in open(f"{d}/adapt.csv") if ",max_share_pct," in l), "?")
    send = glob.glob(f"{d}/logs/*/send.out")[0]
    wanem = glob.glob(f"{d}/logs/*/wanem.err")[0]
    t = open(send).read()
    j = json.loads(t[t.index("{"):])
    # Interval reports: flow 2's cwnd per interval (bytes), by end time.
    cw = {}
    for iv in j.get("intervals", []):
        for s in iv.get("streams", []):
            if s.get("flow") == 2 or s.get("id") == 2:
                cw[round(iv["sum"]["end"] if "sum" in iv else s["end"], 1)] = s.get("snd_cwnd", 0)
    at3 = next((v for k, v in sorted(cw.items()) if k >= 3.0), 0)
    most = max(cw.values(), default=0)
    eps = [l for l in open(wanem) if "A->B overflow at" in l]
    late = [l for l in eps if float(re.search(r"at ([0-9.]+) s", l).group(1)) > 5]
    names = []
    for l in eps:
        for m in re.finditer(r"(cid \w+) dropped", l):
            if m.group(1) not in names:
                names.append(m.group(1))
    cubic = names[1] if len(names) > 1 else None
    cubic_late = sum(1 for l in late if cubic and re.search(cubic + r" dropped [1-9]", l))
    print(f"{d.split('/')[-1]:>10} bbr {float(share):5.1f}% cubic_cwnd@3s {at3/1e6:4.2f} MB most {most/1e6:4.2f} MB episodes>5s {len(late):2d} with_cubic_drops {cubic_late:2d}")
