"""What recording a latency into the engine's histogram costs, measured in C.

10 million values between 1 us and 1 ms, drawn before timing, recorded the
way the RX loop records them (bucket index from the leading bit, then one
increment). Target: at most 5 ns per value.
Usage: python benchmarks/hist_record_cost.py
"""

from __future__ import annotations

from pytest_netload.engine.client import Engine

N = 10_000_000


def main() -> None:
    with Engine() as engine:
        cycles = min(engine.histogram_record_cycles(N) for _ in range(5))
        hz = engine.hello["tsc_hz"]
    per = cycles / N
    print(f"recorded {N:,} values: {per:.2f} cycles each at {hz / 1e9:.2f} GHz TSC "
          "(best of 5)")
    print(f"hist_record_ns: {per / hz * 1e9:.3f}")


if __name__ == "__main__":
    main()
