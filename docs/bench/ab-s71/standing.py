import re, sys, glob
from collections import deque
def load(path):
    out = []
    for line in open(path):
        if 'TMP sample' not in line: continue
        m = re.search(r'\[([\d.]+) s\].*raw_us=(\d+) path_us=(\d+)', line)
        if m: out.append((float(m.group(1)), int(m.group(2)), int(m.group(3))))
    return out
for tag in sys.argv[1:]:
    p = glob.glob(f'/tmp/s71/dbg/{tag}/logs/*/send.err')[0]
    s = load(p)
    for W in (0, 0.002, 0.005, 0.010):
        dq = deque(); st = []
        for t, raw, path in s:
            while dq and dq[-1][1] >= path: dq.pop()
            dq.append((t, path))
            while dq[0][0] < t - W: dq.popleft()
            st.append((t, raw, path, dq[0][1]))
        for a, b in [(12, 19), (20.5, 23)]:
            w = [x for x in st if a <= x[0] < b]
            mn = min(x[1] for x in w); n = len(w)
            print(f'{tag} W={W*1000:.0f}ms {a}-{b}s: raw>2ms {sum(x[1]-mn>2000 for x in w)/n:.1%} path>2ms {sum(x[2]-mn>2000 for x in w)/n:.1%} standing>2ms {sum(x[3]-mn>2000 for x in w)/n:.1%}')
