"""Per arm of an A/B file, BBR's share of the CUBIC-joining cell: its range,
median, mean and runs over 3/4, and a permutation test of each arm's mean
against the base arm's.

Lines read: catchup-ab.sh's "xp<N> p<K>: bbr B% cubic C%, ..." (arm xp<N>)
and build-ab.sh's "<ARM>-p<K>-<only> <cell>: bbr B% cubic C%" (arm <ARM>).
usage: python3 arms.py [--base ARM] <file>...   (base: xp0, or the last arm)"""
import random
import re
import statistics
import sys

args = sys.argv[1:]
base = None
if args[:1] == ["--base"]:
    base, args = args[1], args[2:]
arms = {}
for path in args:
    for line in open(path):
        m = re.match(r"(xp\d|[A-Z][A-Za-z0-9]*)[ -]p\d+\b.*?bbr ([\d.]+)% cubic ([\d.]+)%", line)
        if m:
            arms.setdefault(m.group(1), []).append((float(m.group(2)), float(m.group(3))))
if base is None:
    base = "xp0" if "xp0" in arms else list(arms)[-1]


def perm_p(a, b, n=20000):
    """Two-sided permutation p of the difference of means."""
    rng = random.Random(1)
    obs = abs(statistics.mean(a) - statistics.mean(b))
    pool = a + b
    hits = 0
    for _ in range(n):
        rng.shuffle(pool)
        x, y = pool[: len(a)], pool[len(a):]
        hits += abs(statistics.mean(x) - statistics.mean(y)) >= obs - 1e-12
    return hits / n


for arm in arms:
    b = [r[0] for r in arms[arm]]
    c = [r[1] for r in arms[arm]]
    line = (f"{arm}: {len(b)} runs, BBR {min(b):.1f}-{max(b):.1f} % median {statistics.median(b):.2f} "
            f"mean {statistics.mean(b):.2f}, over 3/4 {sum(x > 75 for x in b)}; "
            f"CUBIC {min(c):.1f}-{max(c):.1f} % mean {statistics.mean(c):.2f}")
    if arm != base:
        line += f"; against {base} p = {perm_p(b, [r[0] for r in arms[base]]):.3f}"
    print(line)
