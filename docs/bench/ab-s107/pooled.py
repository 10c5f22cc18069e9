#!/usr/bin/env python3
"""pooled.py <file>...: BBR's share of the link in the CUBIC-joining cell
(CUBIC joining BBR through 1 MiB at 1 Gbit/s x 40 ms) with CUBIC's catch-ups
made whole against CUBIC leaving the kept queue out of them, pooled over
session 106's and 107's runs: range, median, mean, runs over 3/4, and a
two-sided permutation test on the difference of means (200000 shuffles,
seed 1).

Arms by line prefix: made whole, session 106's F (build N) and session 107's
xp0 (the toggle build's default, session 106's rule); kept queue out,
session 106's H (build X, before the rule; through the tools BBR was never
behind, so CUBIC's catch-ups were all that differed) and session 107's xp1
(the rule for model-based flows only); final-ab.txt's S (session 106's
final build) made whole, R (the final build, f8188753) kept queue out.
Files: ../ab-s106/cj-ab.txt, ../ab-s106/others-ab.txt, cj-toggle.txt,
others-toggle.txt, final-ab.txt."""
import random
import re
import statistics as st
import sys

WHOLE, KEPT_OUT = ("F", "xp0", "S"), ("H", "xp1", "R")
whole, kept_out = [], []
for f in sys.argv[1:]:
    for line in open(f):
        # cj-ab.txt: "F-p1-bbr-vs-cubic-cubic-joins bbr 60.2% ..."; the
        # others files: "F-p1-bbr-vs-cubic bbr-vs-cubic-cubic-joins-...:
        # bbr ..."; cj-toggle.txt: "xp1 p1: bbr 77.3% ...".
        if " bbr " not in line or (
            "cubic-joins" not in line and not re.match(r"xp\d p\d+:", line)
        ):
            continue
        m = re.match(r"(F|H|R|S|xp\d)\b.*? bbr ([\d.]+)%", line)
        arm = m.group(1)
        if arm in WHOLE:
            whole.append(float(m.group(2)))
        elif arm in KEPT_OUT:
            kept_out.append(float(m.group(2)))
        else:
            sys.exit(f"pooled.py: no arm {arm!r} in {f}: {line.strip()}")
for name, v in (("CUBIC made whole", whole), ("CUBIC kept queue out", kept_out)):
    print(f"{name}: {len(v)} runs, BBR {min(v):.1f}-{max(v):.1f} %, median "
          f"{st.median(v):.2f}, mean {st.mean(v):.2f}, over 3/4 {sum(x > 75 for x in v)}")
obs = abs(st.mean(whole) - st.mean(kept_out))
pool, n, shuffles = whole + kept_out, 0, 200_000
random.seed(1)
for _ in range(shuffles):
    random.shuffle(pool)
    a, b = pool[: len(whole)], pool[len(whole):]
    n += abs(st.mean(a) - st.mean(b)) >= obs - 1e-9
print(f"difference of means {obs:.2f} points, permutation p = {n / shuffles:.3f}")
