import sys,re
for fn in sys.argv[1:]:
    L=open(fn).read().splitlines()
    res=[l for l in L if l.startswith('bbr-vs')]
    st=float(re.search(r'after ([\d.]+)s',res[0]).group(1)) if res else 0
    d={}
    for l in L:
        m=re.match(r'\s+(bbr|cubic) t=([\d.]+)s arrived (\d+) Mbit/s (\S+) bw (\d+) Mbit/s pacing (\d+) Mbit/s cwnd (\d+)',l)
        if m: d[(m[1],round(float(m[2]),1))]=(int(m[3]),m[4],int(m[5]),int(m[7]))
    out=[]
    for dt in (0.5,1,2,5,10):
        t=round(st+dt,1)
        b=d.get(('bbr',t)); c=d.get(('cubic',t))
        if b and c: out.append(f"+{dt}s B{b[0]}/bw{b[2]} C{c[0]}/w{c[3]//1000}k")
    print(fn.split('/')[-1], res[0].split(': ')[-1] if res else '', ' | '.join(out))
