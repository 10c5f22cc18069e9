import re,sys
fn=sys.argv[1]; lo=float(sys.argv[2]); hi=float(sys.argv[3])
L=open(fn).read().splitlines()
d={}
for l in L:
    m=re.match(r'\s+(bbr|cubic) t=([\d.]+)s arrived (\d+) Mbit/s (\S+) bw (\d+) Mbit/s pacing (\d+) Mbit/s cwnd (\d+) in flight (\d+) retx (\d+) pto \d+ srtt (\d+)',l)
    if m: d[(m[1],round(float(m[2]),1))]=m
for i in range(int(lo*10),int(hi*10)):
    tt=round(i/10,1)
    B=d.get(('bbr',tt));C=d.get(('cubic',tt))
    if B and C: print(f"{tt:5.1f} B {B[3]:>4} {B[4]:<15} bw{B[5]:>4} pace{B[6]:>4} cwnd{int(B[7])//1000:>5}k fl{int(B[8])//1000:>5}k retx{B[9]:>5} srtt{B[10]} | C {C[3]:>4} cwnd{int(C[7])//1000:>5}k retx{C[9]}")
