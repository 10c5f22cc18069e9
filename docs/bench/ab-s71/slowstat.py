import json, sys, glob, os
for p in sorted(glob.glob(os.path.join(sys.argv[1], '*-*', 'adapt.json'))):
    run = os.path.basename(os.path.dirname(p))
    j = json.load(open(p))
    out = []
    for c in j['cells']:
        m = c['metrics']
        key = {'bbr-drop-recover-rtt40': 'up_s', 'bbr-drop-recover-rtt100': 'up_s', 'bbr-share-4-flows-joining-rtt40': 'jain', 'bbr-share-4-flows-rtt40': 'jain', 'bbr-vs-cubic-shallow-queue-rtt40': 'bbr_pct', 'bbr-vs-cubic-deep-queue-rtt40': 'bbr_pct'}.get(c['name'])
        if key and key in m:
            v = m[key]['runs'][0]; s = m.get('slow_state_share', {}).get('runs', [None])[0]
            out.append(f"{c['name'].replace('bbr-','').replace('-rtt','@')}: {v:.3g} (slow {s:.2f})" if s is not None else f"{c['name']}: {v:.3g}")
    print(run, ' | '.join(out))
