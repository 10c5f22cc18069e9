#!/usr/bin/env python3
"""The most a cold transfer can deliver in the loss grid's 20-s runs, for any
start that doubles from ten datagrams each round trip (TCP's slow start,
BBR's Startup), as % of the link at MTU 1500.

pmdt-bench's loss grid counts from the data's start (after the handshake, as
iperf3 does). Assumptions, each in the transfer's favour: round i of the start sends min(10 * 2**i, BDP) frames; once a round
holds a BDP the link is full to the end of the run; nothing is lost; the
ceiling is the frame's share of stream bytes, 1,442 of 1,514 (95.2 %).
Usage: python3 startup_bound.py [seconds]
"""
import math
import sys

T = float(sys.argv[1]) if len(sys.argv) > 1 else 20.0
FRAME = 1514
CEILING = 1442 / FRAME
for rate in (100e6, 1e9):
    for rtt in (0.010, 0.100, 0.200):
        bdp = rate * rtt / 8 / FRAME
        rounds = math.ceil(math.log2(bdp / 10))
        sent = sum(min(10 * 2**i, bdp) for i in range(rounds))
        start = rounds * rtt
        full = (sent * FRAME * 8 / rate + (T - start)) / T
        print(
            f"{rate / 1e6:5.0f} Mbit/s x {rtt * 1e3:3.0f} ms: BDP {bdp:6.0f} frames, "
            f"{rounds:2d} rounds to fill, bound {CEILING * full * 100:5.1f} % over {T:.0f} s"
        )
