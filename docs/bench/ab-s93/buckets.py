import sys,re,collections
for fn in sys.argv[1:]:
    L=open(fn).read().splitlines()
    res=[l for l in L if l.startswith('bbr-vs')]
    s=collections.defaultdict(list); cut=collections.defaultdict(int); prev={}
    for l in L:
        m=re.match(r'\s+(bbr|cubic) t=([\d.]+)s arrived (\d+) Mbit/s (\S+) bw (\d+) Mbit/s pacing (\d+) Mbit/s cwnd (\d+) in flight \d+ retx (\d+)',l)
        if m:
            t=float(m[2]); k=(m[1],int(t//5))
            s[k].append(int(m[3]))
            if prev.get(m[1]) is not None and int(m[8])>prev[m[1]]: cut[k]+=1
            prev[m[1]]=int(m[8])
    row=[]
    for b in range(2,12):
        row.append("%3d/%3d%s" % (sum(s[('bbr',b)])/max(1,len(s[('bbr',b)])), sum(s[('cubic',b)])/max(1,len(s[('cubic',b)])), '*'*min(3,cut[('cubic',b)])))
    print(fn.split('-')[-1][:-4], res[0].split(': ')[-1][:22] if res else '', ' '.join(row))
