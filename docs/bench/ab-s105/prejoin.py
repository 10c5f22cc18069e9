#!/usr/bin/env python3
"""prejoin.py <send.err>...: for a CUBIC-joining-BBR run with the debug log
(prejoin.sh), the BBR flow's checks before CUBIC started (2 s after the first
"connected") and their verdicts, and the overflows a flow alone's sender's
absence explained then, with the absences' lengths."""
import re, sys
T = re.compile(r"\[([\d.]+) s\]")
for f in sys.argv[1:]:
    lines = open(f, errors="replace").read().splitlines()
    t0 = next((float(T.search(l).group(1)) for l in lines if "connected" in l and T.search(l) and "debug" in l), None)
    if t0 is None:
        print(f"{f}: no 'connected' line"); continue
    join = t0 + 2.0
    verdicts, explained = [], []
    for l in lines:
        m = T.search(l)
        if not m or float(m.group(1)) >= join:
            continue
        t = float(m.group(1)) - t0
        if "checked whose queue stands" in l:
            v = re.search(r"verdict=(\w+)", l).group(1)
            q = re.search(r"queue_us=(\d+)", l).group(1)
            verdicts.append(f"{v}@{t:.2f}s/{int(q)/1000:.1f}ms")
        elif "the sender's absence explains it" in l:
            a = re.search(r"away_us=(\d+)", l).group(1)
            explained.append(f"{t:.2f}s away {int(a)/1000:.1f}ms")
    another = sum(v.startswith("Another") for v in verdicts)
    print(f"  before the join: checks {len(verdicts)}, another {another} [{' '.join(verdicts)}]; "
          f"overflows explained by an absence {len(explained)} [{'; '.join(explained)}]")
