for d in "$@"; do printf "%-28s" $(basename $d); python3 - $d/adapt.csv <<'P'
import csv,sys
rows=list(csv.DictReader(open(sys.argv[1])))
out=[]
for cell in ["bbr-vs-cubic-shallow-queue-rtt40","bbr-vs-cubic-deep-queue-rtt40","bbr-vs-cubic-cubic-joins-shallow-queue-rtt40","bbr-vs-cubic-bbr-joins-deep-queue-rtt40"]:
    m={r['metric']:r['median'] for r in rows if r['cell']==cell}
    if m: out.append("%s bbr %.1f cubic %.1f" % (cell.replace("bbr-vs-cubic-","").replace("-queue-rtt40",""), float(m.get('bbr_pct','nan')), float(m.get('cubic_pct','nan'))))
print(" | ".join(out))
P
done
