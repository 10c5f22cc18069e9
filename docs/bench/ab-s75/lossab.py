#!/usr/bin/env python3
"""lossab.py: per loss cell, of_link_pct (steady_pct) runs for new and head dirs."""
import json, glob, sys
from collections import defaultdict
v = defaultdict(lambda: defaultdict(list))
for d in sorted(glob.glob('/work/main/docs/bench/ab-s75/wan-*-[0-9]')):
    tag = d.split('/')[-1].split('-')[1]
    try:
        j = json.load(open(d + '/loss.json'))
    except Exception:
        continue
    for c in j['cells']:
        m = c['metrics']
        for run, (a, b) in enumerate(zip(m['of_link_pct']['runs'], m['steady_pct']['runs'])):
            v[c['name']][tag].append(f"{a:.1f} ({b:.1f})")
for cell in sorted(v, key=lambda n: (('1gbit' in n), int(n.split('rtt')[1].split('-')[0]), float(n.split('loss')[1]))):
    print(f"{cell:28s} new {', '.join(v[cell]['new']):28s} head {', '.join(v[cell]['head'])}")
