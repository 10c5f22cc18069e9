import re, sys
def load(path, t0, t1):
    out = []
    for line in open(path):
        if 'TMP sample' not in line: continue
        m = re.search(r'\[([\d.]+) s\].*raw_us=(\d+) path_us=(\d+) catching_up=(\w+) in_flight=(\d+)', line)
        if not m: continue
        t = float(m.group(1))
        if t0 <= t < t1:
            out.append((t, int(m.group(2)), int(m.group(3)), m.group(4) == 'true'))
    return out
for tag in sys.argv[1:]:
    import glob
    p = glob.glob(f'/tmp/s71/dbg/{tag}/logs/*/send.err')[0]
    for (a, b) in [(12, 19), (20.5, 23)]:
        s = load(p, a, b)
        if not s: print(tag, 'none'); continue
        mn = min(x[1] for x in s)
        n = len(s)
        raw2 = sum(1 for x in s if x[1] - mn > 2000)
        path2 = sum(1 for x in s if x[2] - mn > 2000)
        cu = sum(1 for x in s if x[3])
        lat = sorted(x[1] - x[2] for x in s)
        print(f'{tag} {a}-{b}s: n={n} min={mn} raw>+2ms {raw2/n:.1%} path>+2ms {path2/n:.1%} catching_up {cu/n:.1%} raw-path p50 {lat[n//2]} p90 {lat[int(n*.9)]} p99 {lat[int(n*.99)]}')
