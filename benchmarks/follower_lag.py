"""The background consumers' lag and reads with one shared feed (issue 19, paced): what the
shared feed's pace (events/feed.py) adds between an append's commit and its fold, and how
many feed reads the consumers of one process make. Prints figures (docs/BENCHMARKS.md,
"One feed for the background consumers"); no test runs it and nothing asserts a duration.

    .venv/bin/python benchmarks/follower_lag.py [--rate 800] [--seconds 5] [--rounds 2]

In a throw-away PostgreSQL database, three followers (as the referee, the bots and the round
keeper) and a projector of the whole catalog in memory follow the feed while games are
created at `--rate` appends/s (one append each, open loop). Each round runs the set-ups
interleaved: `shared, unpaced` (one `SharedFeed` with no pace: each wake-up read at once) and
`shared, paced` (the shared feed's `PACE`, as `fairway serve` runs it); `SETUPS` (names
joined by `;`) picks others or another order. Per set-up: the
lag from each append's return to the moment each follower folds it (p50, p99, max), the
page reads and the waits' looks the store served per append, and this process's CPU per
append (the appends' own and the consumers': compare the set-ups, not the absolute figure).
"""

from __future__ import annotations

import argparse
import asyncio
import os
import secrets
import statistics
import sys
import time
from pathlib import Path

import psycopg
from psycopg import conninfo

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from events.feed import PACE, SharedFeed  # noqa: E402
from events.migrate import migrate  # noqa: E402
from events.schema.common import GameOptions  # noqa: E402
from events.store import START, Checkpoint, PostgresStore, RecordedEvent  # noqa: E402
from projections.catalog import fresh  # noqa: E402
from projections.memory import MemoryProjectionStore  # noqa: E402
from projections.projector import Projector  # noqa: E402
from service.ops.follower import Follower  # noqa: E402
from service.ops.metrics import Metrics  # noqa: E402
from service.play.games import GameService  # noqa: E402

SETUPS = os.environ.get("SETUPS", "shared, unpaced;shared, paced").split(";")
DEFAULT_DB = "postgresql://postgres@127.0.0.1:5432/test"


class Counting:
    """The store, counting the page reads it serves (not the waits' own looks)."""

    def __init__(self, store: PostgresStore) -> None:
        self.store = store
        self.reads = 0
        self.looks = 0
        read = store.read_feed

        async def looking(after: Checkpoint = START, limit: int = 1000) -> list[RecordedEvent]:
            self.looks += limit == 1  # a wait's look at the feed (its reads ask for one event)
            return await read(after, limit)

        store.read_feed = looking  # type: ignore[method-assign]

    async def read_feed(self, after: Checkpoint = START, limit: int = 1000) -> list[RecordedEvent]:
        self.reads += 1
        return await self.store.read_feed(after, limit)

    def __getattr__(self, name: str) -> object:
        return getattr(self.store, name)


class Timing:
    """A follower's consumer noting when it folds each stream's first event."""

    def __init__(self, seen: dict[str, float]) -> None:
        self.seen = seen

    async def fold(self, page: list[RecordedEvent]) -> None:
        now = time.perf_counter()
        for event in page:
            self.seen.setdefault(event.stream_id, now)

    async def act(self) -> float:
        return 1.0


async def run_one(store: PostgresStore, setup: str, rate: float, seconds: float) -> str:
    counting = Counting(store)
    shared = SharedFeed(counting, pace=PACE if setup == "shared, paced" else 0.0)  # type: ignore[arg-type]
    seen: list[dict[str, float]] = [{} for _ in range(3)]
    followers = [Follower(f"f{i}", shared, Timing(s)) for i, s in enumerate(seen)]
    projector = Projector(fresh(), MemoryProjectionStore(), shared, batch=250, grace=0)
    projecting = asyncio.create_task(projector.run())
    for follower in followers:
        follower.start()
    games = GameService(store, Metrics())
    for follower in followers:
        await follower.caught_up.wait()
    await asyncio.sleep(0.5)
    appended: dict[str, float] = {}
    before, looked = counting.reads, counting.looks
    cpu = time.process_time()
    start = time.perf_counter()
    count = int(rate * seconds)
    for i in range(count):
        delay = start + i / rate - time.perf_counter()
        if delay > 0:
            await asyncio.sleep(delay)
        record, _ = await games.create("golf", 2, GameOptions(hands=1), "lag")
        appended[f"game:{record.game_id}"] = time.perf_counter()
    await asyncio.sleep(0.5)
    reads = counting.reads - before
    looks = counting.looks - looked
    del store.read_feed  # the store's own again, for the next set-up's counting
    cpu = time.process_time() - cpu
    for follower in followers:
        await follower.stop()
    projecting.cancel()
    await asyncio.gather(projecting, return_exceptions=True)
    lags = sorted(
        (s[stream] - at) * 1000 for s in seen for stream, at in appended.items() if stream in s
    )
    p99 = lags[int(len(lags) * 0.99)]
    return (
        f"{setup:18} lag p50 {statistics.median(lags):6.2f} ms, p99 {p99:6.2f} ms,"
        f" max {lags[-1]:6.2f} ms; page reads per append {reads / count:5.2f}, looks"
        f" {looks / count:5.2f}; CPU per append (appends, consumers) {cpu / count * 1e6:5.0f} us"
        f" ({count} appends in {time.perf_counter() - start:.1f} s)"
    )


async def main(args: argparse.Namespace) -> None:
    name = f"fairway_lag_{secrets.token_hex(4)}"
    with psycopg.connect(args.url, autocommit=True) as conn:
        conn.execute(f'CREATE DATABASE "{name}"'.encode())
    url = conninfo.make_conninfo(args.url, dbname=name)
    try:
        migrate(url)
        with open("/proc/cpuinfo") as info:
            cpu = next(
                (line.split(":", 1)[1].strip() for line in info if "model name" in line), "?"
            )
        print(f"CPU {cpu}, load average {os.getloadavg()}; {args.rate:.0f} appends/s")
        async with await PostgresStore.open(url) as store:
            for round_ in range(args.rounds):
                print(f"round {round_ + 1}")
                for setup in SETUPS:
                    print("  " + await run_one(store, setup, args.rate, args.seconds))
        print(f"load average {os.getloadavg()}")
    finally:
        with psycopg.connect(args.url, autocommit=True) as conn:
            conn.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)'.encode())


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--url", default=os.environ.get("DATABASE_URL", DEFAULT_DB))
    parser.add_argument("--rate", type=float, default=800.0)
    parser.add_argument("--seconds", type=float, default=5.0)
    parser.add_argument("--rounds", type=int, default=2)
    asyncio.run(main(parser.parse_args()))
