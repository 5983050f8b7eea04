"""The referee's start: what reading the feed from its beginning costs before the first
timeout can be played. Prints figures (docs/BENCHMARKS.md, "The referee's start"); no test
runs it and nothing asserts a duration.

    .venv/bin/python benchmarks/referee_bench.py [--events 200000] [--clocked 0.3]

Plays games with bots (tests/support/played_games.py: finished, in play, in their lobby),
gives a share of them (`--clocked`) a turn clock of an hour, appends them interleaved into a
throw-away PostgreSQL database, then times, best of `--repeat`: a raw read of the whole
feed (pages of 1,000: the floor), and a referee's scan from position zero to the feed's
head (service/referee/referee.py: it folds every clocked game, and forgets each one that ends).
Nothing is due (the clocks run an hour), so the scan is all that is timed.
"""

from __future__ import annotations

import argparse
import asyncio
import random
import secrets
import sys
import time
from pathlib import Path
from typing import Any

import msgspec
import psycopg
from psycopg import conninfo

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from events.migrate import migrate  # noqa: E402
from events.schema.common import GameStarted  # noqa: E402
from events.schema.lobby import GameCreated  # noqa: E402
from events.store import START, PostgresStore  # noqa: E402
from service.ops.metrics import Metrics  # noqa: E402
from service.play.games import GameService  # noqa: E402
from service.referee.referee import Referee  # noqa: E402
from tests.support.played_games import append_interleaved, game_stream  # noqa: E402

DEFAULT_DB = "postgresql://postgres@127.0.0.1:5432/test"


def clocked(events: list[Any]) -> list[Any]:
    """The game's events with an hour's turn clock in its options."""
    out = []
    for event in events:
        if isinstance(event, GameCreated | GameStarted):
            options = msgspec.structs.replace(event.options, turn_seconds=3600)
            event = msgspec.structs.replace(event, options=options)
        out.append(event)
    return out


async def fill(url: str, events: int, share: float, seed: int) -> tuple[int, int]:
    rng = random.Random(seed)
    store = await PostgresStore.open(url)
    total = games = 0
    try:
        while total < events:
            batch = []
            for _ in range(50):
                stream, played = game_stream(rng)
                if rng.random() < share:
                    played = clocked(played)
                    games += 1
                batch.append((stream, played))
            total += await append_interleaved(store, batch, rng.randrange(1 << 30), most=40)
    finally:
        await store.close()
    return total, games


async def read_all(feed: PostgresStore) -> int:
    checkpoint, read = START, 0
    while page := await feed.read_feed(checkpoint, limit=1000):
        read += len(page)
        checkpoint = page[-1].checkpoint
    return read


async def scan(feed: PostgresStore) -> int:
    """A fresh referee from position zero to the head; returns the live clocked games."""
    referee = Referee(feed, GameService(feed, Metrics()))
    referee.start()
    try:
        await referee.caught_up.wait()
    finally:
        await referee.stop()
    return len(referee.tables)


async def best(repeat: int, work: Any) -> tuple[float, Any]:
    times, result = [], None
    for _ in range(repeat):
        started = time.perf_counter()
        result = await work()
        times.append(time.perf_counter() - started)
    return min(times), result


async def main(args: argparse.Namespace) -> None:
    name = f"fairway_refbench_{secrets.token_hex(4)}"
    with psycopg.connect(args.url, autocommit=True) as conn:
        conn.execute(f'CREATE DATABASE "{name}"'.encode())
    url = conninfo.make_conninfo(args.url, dbname=name)
    try:
        migrate(url)
        total, games = await fill(url, args.events, args.clocked, args.seed)
        print(f"{total:,} events; {games:,} games with a clock")
        feed = await PostgresStore.open(url)
        try:
            raw, read = await best(args.repeat, lambda: read_all(feed))
            scanned, live = await best(args.repeat, lambda: scan(feed))
        finally:
            await feed.close()
        print(f"raw feed read:      {raw:6.2f} s  {read / raw:10,.0f} events/s")
        print(
            f"referee start scan: {scanned:6.2f} s  {read / scanned:10,.0f} events/s  "
            f"({scanned / raw:.2f} x the raw read; {live:,} live clocked games kept)"
        )
    finally:
        with psycopg.connect(args.url, autocommit=True) as conn:
            conn.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)'.encode())


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--url", default=DEFAULT_DB)
    parser.add_argument("--events", type=int, default=200_000)
    parser.add_argument("--clocked", type=float, default=0.3)
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--seed", type=int, default=1)
    asyncio.run(main(parser.parse_args()))
