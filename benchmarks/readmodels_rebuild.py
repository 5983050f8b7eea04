"""Rebuild the whole catalog from zero through the real projector, beside a raw feed read.

    python benchmarks/readmodels_rebuild.py [--games 60] [--rounds 3] [--each] [--memory]
                                            [--redis redis://127.0.0.1:6379/13]

Appends bot-played games of every variant (whole games, default options) to a throw-away
embedded event store. Each round then times, one right after the other: a raw read of the
whole feed (pages of 1,000, decoded: the floor any projection pays), and a rebuild of every
projection of the catalog from position zero into Redis (a key prefix of its own, deleted
after) by one projector, as after a flush or at first start; with `--memory` the same into
the in-memory store, with `--each` each projection rebuilt alone. Each rebuild's ratio is to
the raw read of the same round, so a shared machine's load skews both alike: the ratio is
the figure to keep. Prints events/s by wall time, this process's CPU and Redis's CPU per
event, each round's ratio and their median, the CPU model and the load average before and
after.

The process settles its garbage collector first (`service.ops.collector.settle`: what start-up
built frozen, the young generation collected every 10,000 allocations instead of 700), as
`fairway projector` and `fairway serve` do, so that the rebuild runs as production runs it;
`--no-settle` keeps CPython's defaults. The raw read runs in the same process and gains
alike: the setting moves the absolute figures more than the ratio.
"""

from __future__ import annotations

import argparse
import asyncio
import logging
import secrets
import statistics
import sys
import tempfile
import time
from collections.abc import Awaitable, Callable
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import redis.asyncio as aioredis
import structlog
from readmodels_bench import cpu, feed

from events.store import START, EmbeddedStore
from projections.catalog import PROJECTIONS, fresh
from projections.memory import MemoryProjectionStore
from projections.projector import Projector
from projections.redis_store import RedisProjectionStore
from projections.store import ProjectionStore
from service.ops import collector
from tests.support.feeds import streams_of
from tests.support.played_games import append_interleaved


async def read_all(events: EmbeddedStore) -> int:
    checkpoint, n = START, 0
    while page := await events.read_feed(checkpoint, limit=1000):
        n += len(page)
        checkpoint = page[-1].checkpoint
    return n


async def build_catalog(store: ProjectionStore, events: EmbeddedStore) -> None:
    """Every projection of the catalog from zero by one projector, each replacing its live
    generation (the first round: none), as after a flush."""
    projector = Projector(fresh(), store, events, batch=1000, grace=0)
    live = [await store.alias(p.name) for p in projector.projections]
    await asyncio.gather(
        *(
            projector.build(p, n, "requested")
            for p, n in zip(projector.projections, live, strict=True)
        )
    )


async def build_one(store: ProjectionStore, events: EmbeddedStore, name: str) -> None:
    projection = next(p for p in fresh() if p.name == name)
    projector = Projector([projection], store, events, batch=1000, grace=0)
    await projector.build(projection, await store.alias(name), "requested")


async def redis_cpu(client: aioredis.Redis) -> float:
    info = await client.info("cpu")
    return float(info["used_cpu_user"]) + float(info["used_cpu_sys"])


class Timed:
    def __init__(self, wall: float, cpu: float, redis: float) -> None:
        self.wall, self.cpu, self.redis = wall, cpu, redis


async def timed(client: aioredis.Redis, work: Callable[[], Awaitable[object]]) -> Timed:
    redis_before = await redis_cpu(client)
    started, cpu_started = time.perf_counter(), time.process_time()
    await work()
    wall, cpu_time = time.perf_counter() - started, time.process_time() - cpu_started
    return Timed(wall, cpu_time, await redis_cpu(client) - redis_before)


def load() -> str:
    return " ".join(Path("/proc/loadavg").read_text().split()[:3])


async def main() -> None:
    structlog.configure(wrapper_class=structlog.make_filtering_bound_logger(logging.WARNING))
    parser = argparse.ArgumentParser()
    parser.add_argument("--games", type=int, default=60)
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--redis", default="redis://127.0.0.1:6379/13")
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--each", action="store_true", help="each projection alone too")
    parser.add_argument("--memory", action="store_true", help="into the in-memory store too")
    parser.add_argument(
        "--no-settle", action="store_true", help="leave the garbage collector's defaults"
    )
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        events = await EmbeddedStore.open(Path(tmp) / "events")
        streams = [
            (s, [e.data for e in ev]) for s, ev in streams_of(feed(args.games, args.seed)).items()
        ]
        n = await append_interleaved(events, streams, args.seed, most=40)
        if not args.no_settle:
            collector.settle()  # as `fairway projector` does once it has started
        print(f"CPU: {cpu()}; load average before: {load()}")
        print(f"garbage collector: {'defaults' if args.no_settle else 'settled'}")
        names = ", ".join(p.name for p in PROJECTIONS)
        print(f"feed: {args.games} games, {n:,} events; pages of 1,000; catalog: {names}")
        prefix = f"bench{secrets.token_hex(4)}"
        redis = RedisProjectionStore.from_url(args.redis, prefix, timeout=30.0)
        client = aioredis.Redis.from_url(args.redis)
        rows: dict[str, list[tuple[Timed, Timed]]] = {}
        try:
            work: list[tuple[str, Callable[[], Awaitable[object]]]] = [
                ("all six, Redis", lambda: build_catalog(redis, events))
            ]
            if args.memory:
                work.append(
                    ("all six, memory", lambda: build_catalog(MemoryProjectionStore(), events))
                )
            if args.each:
                work += [
                    (f"{p.name} alone, Redis", lambda name=p.name: build_one(redis, events, name))
                    for p in PROJECTIONS
                ]
            for round_ in range(args.rounds):
                for label, job in work:
                    raw = await timed(client, lambda: read_all(events))
                    built = await timed(client, job)
                    rows.setdefault(label, []).append((raw, built))
                    print(
                        f"  round {round_ + 1}: {label:<22} {n / built.wall:>9,.0f} events/s,"
                        f" raw read {n / raw.wall:>9,.0f}: {raw.wall / built.wall:.2f}",
                        flush=True,
                    )
        finally:
            await redis.close()
            for pattern in (f"{prefix}:*", f"{{{prefix}:*"):
                keys = [k async for k in client.scan_iter(match=pattern, count=1000)]
                if keys:
                    await client.unlink(*keys)
            await client.aclose()
            await events.close()
        print(f"load average after: {load()}")
        print(
            f"{'(medians of ' + str(args.rounds) + ' rounds)':<24} {'events/s':>10}"
            f" {'raw read/s':>11} {'ratio':>6} {'ratios':>18} {'µs CPU/event':>13}"
            f" {'raw µs CPU':>11} {'Redis µs':>9}"
        )
        for label, pairs in rows.items():
            ratios = [raw.wall / built.wall for raw, built in pairs]
            print(
                f"{label:<24} {n / statistics.median(b.wall for _, b in pairs):>10,.0f}"
                f" {n / statistics.median(r.wall for r, _ in pairs):>11,.0f}"
                f" {statistics.median(ratios):>6.2f}"
                f" {' '.join(f'{r:.2f}' for r in ratios):>18}"
                f" {statistics.median(b.cpu for _, b in pairs) / n * 1e6:>13.1f}"
                f" {statistics.median(r.cpu for r, _ in pairs) / n * 1e6:>11.1f}"
                f" {statistics.median(b.redis for _, b in pairs) / n * 1e6:>9.1f}"
            )


if __name__ == "__main__":
    asyncio.run(main())
