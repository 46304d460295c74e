"""What TX timestamps cost: the same 64 B stream on net_null, stamped in every
packet and in none (stamp_every = 2**32 - 1), alternating rounds (the order flips
each round), best run of three per round. Target: stamping costs at most 10 % of TX pps.
Usage: python benchmarks/stamp_cost.py
"""

from __future__ import annotations

import statistics

from _common import best_of

from pytest_netload import UDP, Engine, Eth, IPv4, Stream

TMPL = (Eth() / IPv4() / UDP()).build()


def main() -> None:
    ratios = []
    with Engine() as engine:
        port = engine.port("net_null0")
        stamped = engine.load(port, Stream(TMPL, size=64, name="stamped"))
        bare = engine.load(port, Stream(TMPL, size=64, name="bare", stamp_every=2**32 - 1))
        for s in (stamped, bare):
            engine.run([s], duration_s=0.3)
        for i in range(6):
            first, second = (stamped, bare) if i % 2 == 0 else (bare, stamped)
            x = best_of(3, lambda s=first: engine.run([s], duration_s=0.5).tx_pps)
            y = best_of(3, lambda s=second: engine.run([s], duration_s=0.5).tx_pps)
            a, b = (x, y) if first is stamped else (y, x)
            ratios.append(a / b)
            print(f"stamped {a / 1e6:.2f} Mpps, unstamped {b / 1e6:.2f} Mpps")
    cost = 100 * (1 - statistics.median(ratios))
    print(f"stamping_cost_pct: {cost:.2f}")


if __name__ == "__main__":
    main()
