"""Each flow of a pmdt-send JSON summary over every 2 s: goodput (Mbit/s), and
BBR's estimate range and ProbeBW phases (r cruise, o down, e refill, p up, s
startup) or CUBIC's window range (KB). usage: python3 timeline.py <send.out>"""
import json, sys
d = json.load(open(sys.argv[1]))
iv = d["intervals"]
for k in range(0, len(iv), 10):
    ch = iv[k:k+10]
    secs = sum(c["sum"]["seconds"] for c in ch)
    out = []
    for f in (0, 1):
        ss = [c["streams"][f] for c in ch if len(c["streams"]) > f]
        if not ss: continue
        g = sum(s["bytes"] for s in ss) * 8 / secs / 1e6
        if ss[0]["cc_state"] == "window_based":
            out.append(f"cubic {g:4.0f} cwnd {min(s['snd_cwnd'] for s in ss)/1e3:5.0f}-{max(s['snd_cwnd'] for s in ss)/1e3:5.0f}")
        else:
            est = [s["bandwidth_estimate"] / 1e6 for s in ss]
            st = "".join((s["cc_state"][10:11] or s["cc_state"][0]) for s in ss)
            out.append(f"bbr {g:4.0f} est {min(est):4.0f}-{max(est):4.0f} {st}")
    print(f"{ch[0]['sum']['start']:5.1f} " + " | ".join(out))
