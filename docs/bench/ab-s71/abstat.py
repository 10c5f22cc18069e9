#!/usr/bin/env python3
"""abstat.py DIR: per cell, head vs new runs of the key metrics."""
import json, sys, glob, os, re
from collections import defaultdict
KEYS = {
 'bbr-drop-recover-rtt40': ['down_s', 'up_s', 'high_pct', 'retransmitted'],
 'bbr-drop-recover-rtt100': ['down_s', 'up_s', 'high_pct', 'retransmitted'],
 'bbr-share-4-flows-rtt40': ['jain', 'of_link_pct'],
 'bbr-share-4-flows-joining-rtt40': ['jain', 'of_link_pct'],
 'bbr-vs-cubic-shallow-queue-rtt40': ['bbr_pct', 'cubic_pct'],
 'bbr-vs-cubic-deep-queue-rtt40': ['bbr_pct', 'cubic_pct'],
}
d = sys.argv[1]
vals = defaultdict(lambda: defaultdict(lambda: defaultdict(list)))
rt = defaultdict(list)
for p in sorted(glob.glob(os.path.join(d, '*-*', 'adapt.json'))):
    v = re.match(r'(head|new|gated|owd|v2|v3|v4)-\d+', os.path.basename(os.path.dirname(p))).group(1)
    j = json.load(open(p))
    for c in j['cells']:
        m = c['metrics']
        for k in KEYS.get(c['name'], []):
            if k in m:
                vals[c['name']][k][v] += m[k]['runs']
        if 'core_round_trip_ns' in m:
            rt[v] += m['core_round_trip_ns']['runs']
for cell, ks in KEYS.items():
    for k in ks:
        line = f'{cell:34s} {k:14s}'
        for v in ("head", "new", "gated", "owd", "v2", "v3", "v4"):
            r = vals[cell][k][v]
            if r:
                line += f' | {v}: ' + ' '.join(f'{x:.3g}' for x in r) + f' (mean {sum(r)/len(r):.3g})'
        print(line)
for v in ("head", "new", "gated", "owd", "v2", "v3", "v4"):
    if rt[v]:
        print(f'core RT {v}: {min(rt[v]):.0f}-{max(rt[v]):.0f} ns')
