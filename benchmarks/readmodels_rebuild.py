"""Rebuild from zero through the real projector: embedded event store -> runner -> store.

    python benchmarks/readmodels_rebuild.py [--games 60] [--redis redis://127.0.0.1:6379/13]

Appends bot-played games of every variant (whole games, default options) to a throw-away
embedded event store, then builds each projection from position zero with
`Projector.build` into the in-memory store and into Redis (a key prefix of its own, deleted
after), and all of them together (one after the other, as `fairway projector` does at
first start). Beside each figure: the bare feed read of the same events in the same run
(pages of 1,000), so the ratio says what the projection and its store add. Prints events/s
by wall time and by this process's CPU time (the machine is shared: CPU time leaves out the
waits for a core; it also leaves out Redis's own work), the best of 3, and the CPU model.
"""

from __future__ import annotations

import argparse
import asyncio
import logging
import secrets
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import redis.asyncio as aioredis
import structlog
from readmodels_bench import cpu, feed

from events.store import START, EmbeddedStore
from projections.catalog import PROJECTIONS
from projections.lobby import LobbyProjection
from projections.memory import MemoryProjectionStore
from projections.players import Players
from projections.projector import Projector
from projections.ratings import Ratings
from projections.redis_store import RedisProjectionStore
from projections.replay import Replays
from projections.scoreboard import Scoreboard
from projections.standings import StandingsProjection
from projections.store import ProjectionStore
from tests.support.feeds import streams_of
from tests.support.played_games import append_interleaved

FRESH = {
    "lobby": LobbyProjection,
    "scoreboard": Scoreboard,
    "players": Players,
    "replay": Replays,
    "standings": StandingsProjection,
    "ratings": Ratings,
}


async def read_all(events: EmbeddedStore) -> int:
    checkpoint, n = START, 0
    while page := await events.read_feed(checkpoint, limit=1000):
        n += len(page)
        checkpoint = page[-1].checkpoint
    return n


async def build(
    store: ProjectionStore, events: EmbeddedStore, names: list[str]
) -> tuple[float, float]:
    """Wall time and this process's CPU time of building `names` from zero."""
    started, cpu_started = time.perf_counter(), time.process_time()
    projections: list[Any] = [FRESH[name]() for name in names]
    projector = Projector(projections, store, events, batch=1000, grace=0)
    for projection in projections:
        await projector.build(projection, None)
    return time.perf_counter() - started, time.process_time() - cpu_started


async def main() -> None:
    structlog.configure(wrapper_class=structlog.make_filtering_bound_logger(logging.WARNING))
    parser = argparse.ArgumentParser()
    parser.add_argument("--games", type=int, default=60)
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--redis", default="redis://127.0.0.1:6379/13")
    parser.add_argument("--repeat", type=int, default=3, help="builds of each; the best counts")
    args = parser.parse_args()
    assert {p.name for p in PROJECTIONS} == set(FRESH)
    with tempfile.TemporaryDirectory() as tmp:
        events = await EmbeddedStore.open(Path(tmp) / "events")
        streams = [
            (s, [e.data for e in ev]) for s, ev in streams_of(feed(args.games, args.seed)).items()
        ]
        n = await append_interleaved(events, streams, args.seed, most=40)
        print(f"CPU: {cpu()}")
        print(f"feed: {args.games} games, {n:,} events; batches of 1,000")
        wall, cpu_time = float("inf"), float("inf")
        for _ in range(3):  # the machine is shared: the best of 3 is the least disturbed
            started, cpu_started = time.perf_counter(), time.process_time()
            assert await read_all(events) == n
            wall = min(wall, time.perf_counter() - started)
            cpu_time = min(cpu_time, time.process_time() - cpu_started)
        base = n / cpu_time
        print(f"{'':<40} {'wall':>10}          {'CPU (this process)':>18}")
        print(f"{'bare feed read':<40} {n / wall:>10,.0f} events/s {base:>10,.0f} events/s")
        prefix = f"bench{secrets.token_hex(4)}"
        redis = RedisProjectionStore.from_url(args.redis, prefix, timeout=30.0)
        try:
            for label, store in (("memory", MemoryProjectionStore()), ("redis", redis)):
                for names in [[name] for name in FRESH] + [list(FRESH)]:
                    runs = [await build(store, events, names) for _ in range(args.repeat)]
                    wall = min(w for w, _ in runs)
                    rate = n / min(c for _, c in runs)
                    what = names[0] if len(names) == 1 else "all four, one after the other"
                    print(
                        f"{label + ': ' + what:<40} {n / wall:>10,.0f} events/s "
                        f"{rate:>10,.0f} events/s ({rate / base:.2f} x the feed read)"
                    )
        finally:
            await redis.close()
            client = aioredis.Redis.from_url(args.redis)
            for pattern in (f"{prefix}:*", f"{{{prefix}:*"):
                keys = [k async for k in client.scan_iter(match=pattern, count=1000)]
                if keys:
                    await client.unlink(*keys)
            await client.aclose()
            await events.close()


if __name__ == "__main__":
    asyncio.run(main())
