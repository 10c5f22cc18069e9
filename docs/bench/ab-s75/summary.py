#!/usr/bin/env python3
"""summary.py: new vs head per cell (mean of runs), whole-run and steady; counts and mean difference."""
import json, glob, statistics
from collections import defaultdict
v = defaultdict(lambda: defaultdict(lambda: ([], [])))
for d in sorted(glob.glob('/work/main/docs/bench/ab-s75/wan-*-[0-9]')):
    tag = d.split('/')[-1].split('-')[1]
    j = json.load(open(d + '/loss.json'))
    for c in j['cells']:
        m = c['metrics']
        v[c['name']][tag][0].extend(m['of_link_pct']['runs'])
        v[c['name']][tag][1].extend(m['steady_pct']['runs'])
for k, name in ((0, 'whole'), (1, 'steady')):
    d = [statistics.mean(v[c]['new'][k]) - statistics.mean(v[c]['head'][k]) for c in v]
    print(f"{name}: new higher in {sum(x > 0 for x in d)} of {len(d)} cells, mean {statistics.mean(d):+.2f} points, median {statistics.median(d):+.2f}, min {min(d):+.2f}, max {max(d):+.2f}")
