"""The lobby read's latency under load (issue 19): GET /games (the lobby read model, the
first page of 50) every `--every` seconds against a running `fairway serve`, while a load
run plays on it; prints p50/p90/p99/max. No test runs it and nothing asserts a duration.

    .venv/bin/python benchmarks/lobby_probe.py [--port P] [--seconds 40] [--every 0.25]
        [--connections 4]

Without `--port`, the port of the one `service.cli serve` process running (as
benchmarks/api_load.py and benchmarks/side_by_side.py start it) is found in /proc. The
requests go round-robin over `--connections` keep-alive connections, which the kernel
spreads over the server's workers; with in-memory read models each worker's read first
catches its projector up (projections/demand.py), so the latency includes that round.
"""

from __future__ import annotations

import argparse
import asyncio
import statistics
import sys
import time
from collections import Counter
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from benchmarks.load.client import RawClient  # noqa: E402


def serving_port() -> int:
    """The `--port` of the one `service.cli serve` process running."""
    found = set()
    for cmdline in Path("/proc").glob("[0-9]*/cmdline"):
        try:
            words = cmdline.read_bytes().split(b"\0")
        except OSError:
            continue
        if b"service.cli" in words and b"serve" in words and b"--port" in words:
            found.add(int(words[words.index(b"--port") + 1]))
    if len(found) != 1:
        raise SystemExit(f"expected one `service.cli serve` running, found ports {found}")
    return found.pop()


async def probe(port: int, seconds: float, every: float, connections: int) -> list[float]:
    clients = [RawClient(port) for _ in range(connections)]
    times: list[float] = []
    errors: Counter[str] = Counter()
    end = time.monotonic() + seconds
    turn = 0
    while time.monotonic() < end:
        client = clients[turn % connections]
        turn += 1
        started = time.perf_counter()
        try:
            code, _ = await client.call("GET", "/games?limit=50")
        except (ConnectionError, OSError) as error:
            errors[type(error).__name__] += 1
            await asyncio.sleep(every)
            continue
        elapsed = time.perf_counter() - started
        if code == 200:
            times.append(elapsed)
        else:
            errors[str(code)] += 1
        await asyncio.sleep(max(0.0, every - elapsed))
    if errors:
        print(f"errors: {dict(errors)}")
    return times


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--port", type=int, default=None)
    parser.add_argument("--seconds", type=float, default=40.0)
    parser.add_argument("--every", type=float, default=0.25)
    parser.add_argument("--connections", type=int, default=4)
    parser.add_argument("--label", default="")
    args = parser.parse_args()
    port = args.port or serving_port()
    times = asyncio.run(probe(port, args.seconds, args.every, args.connections))
    if not times:
        print("no answer")
        return
    print(f"lobby GET {args.label}: first {times[0] * 1000:.1f} ms (the catch-up since start)")
    ms = sorted(t * 1000 for t in times[1:] or times)
    q = statistics.quantiles(ms, n=100, method="inclusive") if len(ms) > 1 else ms * 99
    print(
        f"lobby GET {args.label}, after the first: n={len(ms)} p50 {q[49]:.1f} ms"
        f" p90 {q[89]:.1f} ms p99 {q[98]:.1f} ms max {ms[-1]:.1f} ms"
    )


if __name__ == "__main__":
    main()
