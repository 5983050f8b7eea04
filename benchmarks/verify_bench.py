"""What verifying a stream's hash chain on read costs (docs/EVENT_STORE.md, "Figures").

    uv run python benchmarks/verify_bench.py [--url postgresql://postgres@127.0.0.1:5432/test]
        [--events 2000] [--repeats 41]

Reads one stream of --events events with `read_stream(stream_id)` and with
`read_stream(stream_id, prev_hash=GENESIS_HASH)`, alternating the two, on PostgreSQL (a
throw-away database next to the one in --url, default $DATABASE_URL) and on the embedded
store; prints the medians, their ratio measured in the same run, the median of the
per-pair ratios, and the verification alone (`verify_chain` over rows already read).
"""

from __future__ import annotations

import argparse
import asyncio
import os
import secrets
import statistics
import sys
import tempfile
import time
import uuid
from pathlib import Path

import psycopg
from psycopg import conninfo

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from events.codec import GENESIS_HASH
from events.migrate import migrate
from events.schema.common import HandDealt
from events.store import EventStore, NewEvent, open_store
from events.store.base import verify_chain


def event(i: int) -> NewEvent:
    """A hand.dealt of the usual size (seed and commitment: 64 hex digits each)."""
    digits = f"{i:064x}"
    return NewEvent(uuid.uuid4(), HandDealt(i, i % 4, digits, digits), {"request": f"r-{i}"})


async def measure(store: EventStore, label: str, events: int, repeats: int) -> None:
    stream = f"bench:{uuid.uuid4().hex}"
    for start in range(0, events, 100):
        batch = [event(i) for i in range(start, min(start + 100, events))]
        await store.append(stream, start, batch)

    async def timed(prev_hash: bytes | None) -> float:
        started = time.perf_counter()
        read = await store.read_stream(stream, prev_hash=prev_hash)
        elapsed = (time.perf_counter() - started) * 1000
        assert len(read) == events
        return elapsed

    plain: list[float] = []
    verified: list[float] = []
    for round_ in range(repeats + 3):
        pair = {}
        for kind in ("plain", "verified")[:: 1 if round_ % 2 == 0 else -1]:
            pair[kind] = await timed(None if kind == "plain" else GENESIS_HASH)
        if round_ >= 3:  # warm-up
            plain.append(pair["plain"])
            verified.append(pair["verified"])

    rows = await store._stream_rows(stream, 1, None)
    alone = []
    for _ in range(repeats):
        started = time.perf_counter()
        verify_chain(stream, 1, GENESIS_HASH, rows)
        alone.append((time.perf_counter() - started) * 1000)

    p, v, a = statistics.median(plain), statistics.median(verified), statistics.median(alone)
    pairs = statistics.median(y / x for x, y in zip(plain, verified, strict=True))
    print(f"{label}: read {events:,} events, median of {repeats}")
    print(f"  read_stream                      {p:7.2f} ms")
    print(f"  read_stream(prev_hash=GENESIS)   {v:7.2f} ms")
    print(f"  ratio {v / p:.2f} (median of per-pair ratios {pairs:.2f}), +{v - p:.2f} ms")
    print(f"  verify_chain alone               {a:7.2f} ms ({a * 1000 / events:.2f} µs/event)")


async def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    default = os.environ.get("DATABASE_URL", "postgresql://postgres@127.0.0.1:5432/test")
    parser.add_argument("--url", default=default, help="any database on the server to use")
    parser.add_argument("--events", type=int, default=2000)
    parser.add_argument("--repeats", type=int, default=41)
    args = parser.parse_args()

    name = f"fairway_bench_{secrets.token_hex(4)}"
    with psycopg.connect(args.url, autocommit=True) as conn:
        conn.execute(f'CREATE DATABASE "{name}"'.encode())
    url = conninfo.make_conninfo(args.url, dbname=name)
    try:
        migrate(url)
        async with await open_store(url, ".") as store:
            await measure(store, "PostgreSQL", args.events, args.repeats)
        with tempfile.TemporaryDirectory() as data_dir:
            async with await open_store(None, data_dir) as embedded:
                await measure(embedded, "embedded", args.events, args.repeats)
    finally:
        with psycopg.connect(args.url, autocommit=True) as conn:
            conn.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)'.encode())


if __name__ == "__main__":
    asyncio.run(main())
