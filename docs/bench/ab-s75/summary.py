#!/usr/bin/env python3
"""summary.py: the A/B's runs per cell, whole run (steady state), new and head; then
how many cells the new build won and the mean difference of the two sides' means."""
import json, glob, statistics
from collections import defaultdict

runs = defaultdict(lambda: defaultdict(lambda: ([], [])))
for d in sorted(glob.glob('/work/main/docs/bench/ab-s75/wan-*-[0-9]')):
    side = d.split('/')[-1].split('-')[1]
    for cell in json.load(open(d + '/loss.json'))['cells']:
        m = cell['metrics']
        runs[cell['name']][side][0].extend(m['of_link_pct']['runs'])
        runs[cell['name']][side][1].extend(m['steady_pct']['runs'])


def order(name):
    return ('1gbit' in name, int(name.split('rtt')[1].split('-')[0]), float(name.split('loss')[1]))


for name in sorted(runs, key=order):
    shown = {s: ', '.join(f"{w:.1f} ({st:.1f})" for w, st in zip(*runs[name][s])) for s in ('new', 'head')}
    print(f"{name:28s} new {shown['new']:28s} head {shown['head']}")
for k, what in ((0, 'whole'), (1, 'steady')):
    d = [statistics.mean(runs[c]['new'][k]) - statistics.mean(runs[c]['head'][k]) for c in runs]
    print(f"{what}: new higher in {sum(x > 0 for x in d)} of {len(d)} cells, mean {statistics.mean(d):+.2f} points, "
          f"median {statistics.median(d):+.2f}, min {min(d):+.2f}, max {max(d):+.2f}")
