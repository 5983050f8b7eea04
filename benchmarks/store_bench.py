"""Event store benchmark: prints figures (docs/EVENT_STORE.md, "Figures").

    uv run python benchmarks/store_bench.py [--url postgresql://postgres@127.0.0.1:5432/test]
        [--seconds 4] [--rounds 5] [--writers 1,8] [--quiet-wait 60] [--keep]

It creates a throw-away database next to the one in --url (default: $DATABASE_URL, else
127.0.0.1:5432 user postgres), migrates it, and measures in the same run:

- raw: one-row locked inserts (BEGIN; advisory lock; INSERT; COMMIT) into the same `events`
  table, by pgbench (prepared, C client) and by psycopg (the store's own client stack, one
  statement per round trip, and pipelined);
- the store: `append` of one event per transaction, each writer on its own stream;
- reading one 2,000-event stream, and catching up the whole feed from the start;
- the embedded store, for comparison.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import re
import secrets
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
import uuid
from collections.abc import Awaitable, Callable
from pathlib import Path

import psycopg
from psycopg import conninfo

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from events.migrate import migrate
from events.schema.common import HandEnded
from events.store import START, EventStore, NewEvent, open_store

RAW_INSERT = (
    "INSERT INTO events (stream_id, stream_version, event_id, type, schema_version, data,"
    " metadata, hash) VALUES ({stream}, {version}, gen_random_uuid(), 'hand.ended', 1, "
    """'{{"type":"hand.ended","hand":1,"reason":"out","seed":"00","scores":[1,2],"""
    """"totals":[1,2]}}', '{{"seat":0}}', sha256('x'::bytea))"""
)
PGBENCH_STREAM = "'raw-pgbench-' || :run || '-' || :client_id"
PGBENCH_SCRIPT = f"""\\set v :v + 1
BEGIN;
SELECT pg_advisory_xact_lock(hashtextextended({PGBENCH_STREAM}, 0));
{RAW_INSERT.format(stream=PGBENCH_STREAM, version=":v")};
COMMIT;
"""
# the store's SQL path from the same C client: what the server side of an append costs
RAW_DATA = '{"type":"hand.ended","hand":1,"reason":"out","seed":"00","scores":[1,2],"totals":[1,2]}'
PGBENCH_FUNCTION = (
    "\\set v :v + 1\n"
    "SELECT * FROM fairway_append('fn-pgbench-' || :run || '-' || :client_id, :v - 1,"
    f" gen_random_uuid(), 'hand.ended', 1, '{RAW_DATA}', '{{\"seat\":0}}');\n"
)


def event(i: int) -> NewEvent:
    return NewEvent(
        uuid.uuid4(),
        HandEnded(hand=1, reason="out", seed="00", scores=(1, 2), totals=(1, 2)),
        {"seat": i % 4},
    )


def machine_busy() -> tuple[float, float]:
    """(busy, total) CPU jiffies of the whole machine so far (Linux); (0, 0) elsewhere."""
    try:
        with open("/proc/stat") as stat:
            fields = [float(x) for x in stat.readline().split()[1:]]
    except OSError:
        return 0.0, 0.0
    idle = fields[3] + fields[4]  # idle + iowait
    return sum(fields) - idle, sum(fields)


async def wait_quiet(limit: float, threshold: float = 0.25) -> float:
    """Wait (at most `limit` s) until the machine was under `threshold` busy for 2 s; the
    busy share seen last. Other people's work on a shared machine skews every figure."""
    deadline = time.monotonic() + limit
    while True:
        busy0, total0 = machine_busy()
        await asyncio.sleep(2)
        busy1, total1 = machine_busy()
        busy = (busy1 - busy0) / max(1e-9, total1 - total0)
        if busy < threshold or time.monotonic() >= deadline:
            return busy


async def run_for(seconds: float, writers: int, one: Callable[[int], Awaitable[None]]) -> float:
    """Operations per second of `writers` tasks each calling `one(writer)` for `seconds`."""
    stop = time.perf_counter() + seconds
    counts = [0] * writers

    async def loop(w: int) -> None:
        while time.perf_counter() < stop:
            await one(w)
            counts[w] += 1

    started = time.perf_counter()
    await asyncio.gather(*(loop(w) for w in range(writers)))
    return sum(counts) / (time.perf_counter() - started)


def pgbench(url: str, clients: int, seconds: float, text: str = PGBENCH_SCRIPT) -> float:
    exe = shutil.which("pgbench") or "/usr/lib/postgresql/15/bin/pgbench"
    with tempfile.NamedTemporaryFile("w", suffix=".sql", delete=False) as script:
        script.write(text)
    try:
        clients_ = ["-c", str(clients), "-j", str(clients)]
        run = ["-T", str(int(seconds)), "-D", "v=0", "-D", f"run={secrets.token_hex(4)}"]
        done = subprocess.run(
            [exe, "-n", "-M", "prepared", *clients_, *run, "-f", script.name, url],
            capture_output=True,
            text=True,
        )
        if done.returncode:
            raise RuntimeError(f"pgbench failed:\n{done.stdout}\n{done.stderr}")
        out = done.stdout
    finally:
        os.unlink(script.name)
    match = re.search(r"tps = ([\d.]+) \(without initial connection time\)", out)
    if not match:
        raise RuntimeError(f"cannot read pgbench output:\n{out}")
    return float(match[1])


async def psycopg_raw(url: str, writers: int, seconds: float, pipelined: bool) -> float:
    """The raw locked insert from the store's own client stack: one statement per round
    trip, or all four in one pipeline (one round trip, like the store's append)."""
    conns = [
        await psycopg.AsyncConnection.connect(url, autocommit=True, prepare_threshold=0)
        for _ in range(writers)
    ]
    versions = [0] * writers
    streams = [f"raw-psycopg-{secrets.token_hex(4)}-{w}" for w in range(writers)]
    insert = RAW_INSERT.format(stream="%s", version="%s").encode()

    async def transaction(w: int) -> None:
        async with conns[w].transaction():
            await conns[w].execute(
                "SELECT pg_advisory_xact_lock(hashtextextended(%s, 0))", (streams[w],)
            )
            await conns[w].execute(insert, (streams[w], versions[w]))

    async def one(w: int) -> None:
        versions[w] += 1
        if pipelined:
            async with conns[w].pipeline():
                await transaction(w)
        else:
            await transaction(w)

    try:
        return await run_for(seconds, writers, one)
    finally:
        for conn in conns:
            await conn.close()


async def store_appends(store: EventStore, writers: int, seconds: float) -> float:
    streams = [f"bench:{uuid.uuid4().hex}" for _ in range(writers)]
    versions = [0] * writers

    async def one(w: int) -> None:
        await store.append(streams[w], versions[w], [event(versions[w])])
        versions[w] += 1

    return await run_for(seconds, writers, one)


async def read_figures(store: EventStore) -> tuple[float, float, int]:
    """(median ms to read a 2,000-event stream, feed catch-up events/s, feed events read)."""
    stream = f"bench:{uuid.uuid4().hex}"
    for start in range(0, 2000, 100):
        await store.append(stream, start, [event(i) for i in range(start, start + 100)])
    timings = []
    for _ in range(15):
        started = time.perf_counter()
        events = await store.read_stream(stream)
        timings.append((time.perf_counter() - started) * 1000)
        assert len(events) == 2000
    read_ms = statistics.median(timings[3:])

    started = time.perf_counter()
    total, checkpoint = 0, START
    while page := await store.read_feed(checkpoint, limit=1000):
        total += len(page)
        checkpoint = page[-1].checkpoint
    rate = total / (time.perf_counter() - started)
    return read_ms, rate, total


LABELS = {
    "pgbench": "raw locked insert, pgbench -M prepared",
    "function": "fairway_append, pgbench -M prepared",
    "raw": "raw locked insert, psycopg",
    "pipe": "raw locked insert, psycopg pipelined",
    "store": "store append",
}


async def compare_appends(
    url: str, store: EventStore, writers: int, args: argparse.Namespace
) -> None:
    """Rounds of: pgbench and the store back to back (alternating which goes first, so each
    pair sees about the same load; the ratio is taken per pair), then the psycopg raws."""
    runs: dict[str, list[float]] = {key: [] for key in LABELS}
    for round_ in range(args.rounds):
        busy = await wait_quiet(args.quiet_wait)
        print(f"  (round {round_ + 1} starts with the machine {busy:.0%} busy)")
        for kind in ("pgbench", "store")[:: 1 if round_ % 2 == 0 else -1]:
            if kind == "pgbench":
                runs["pgbench"].append(pgbench(url, writers, args.seconds))
            else:
                runs["store"].append(await store_appends(store, writers, args.seconds))
        runs["function"].append(pgbench(url, writers, args.seconds, PGBENCH_FUNCTION))
        runs["raw"].append(await psycopg_raw(url, writers, args.seconds, False))
        runs["pipe"].append(await psycopg_raw(url, writers, args.seconds, True))

    median = {key: statistics.median(values) for key, values in runs.items()}
    print(f"{writers} writer(s), median of {args.rounds} rounds (each round):")
    for key, label in LABELS.items():
        each = ", ".join(f"{r:.0f}" for r in runs[key])
        print(f"  {label:<40} {median[key]:7.0f}/s  ({each})")
    ratios = [ours / raw for ours, raw in zip(runs["store"], runs["pgbench"], strict=True)]
    print(
        f"  store / pgbench: {statistics.median(ratios):.0%} median of the rounds"
        f" ({', '.join(f'{r:.0%}' for r in ratios)})"
    )
    print(
        f"  store / psycopg: {median['store'] / median['raw']:.0%},"
        f" store / psycopg pipelined: {median['store'] / median['pipe']:.0%},"
        f" fairway_append / raw, both by pgbench: {median['function'] / median['pgbench']:.0%}"
    )


async def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    default = os.environ.get("DATABASE_URL", "postgresql://postgres@127.0.0.1:5432/test")
    parser.add_argument("--url", default=default, help="any database on the server to use")
    parser.add_argument("--seconds", type=float, default=4.0)
    parser.add_argument("--writers", default="1,8")
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument(
        "--quiet-wait", type=float, default=60.0, help="wait up to this long for a quiet machine"
    )
    parser.add_argument("--keep", action="store_true", help="keep the benchmark database")
    args = parser.parse_args()
    writer_counts = [int(w) for w in args.writers.split(",")]

    name = f"fairway_bench_{secrets.token_hex(4)}"
    admin = args.url
    with psycopg.connect(admin, autocommit=True) as conn:
        conn.execute(f'CREATE DATABASE "{name}"'.encode())
    url = conninfo.make_conninfo(admin, dbname=name)
    try:
        migrate(url)
        version = psycopg.connect(url).execute("SHOW server_version").fetchone()
        print(f"PostgreSQL {version[0] if version else '?'}, {os.cpu_count()} CPUs, {url}")
        print(f"{args.seconds:.0f} s per run; one event per append; a stream per writer\n")
        size = max(writer_counts) + 2
        async with await open_store(url, ".", pool_min_size=size, pool_max_size=size) as store:
            for writers in writer_counts:
                await compare_appends(url, store, writers, args)
            read_ms, rate, total = await read_figures(store)
            print(f"\nread a 2,000-event stream: {read_ms:.2f} ms (median of 12)")
            print(f"feed catch-up: {rate:,.0f} events/s over {total:,} events")

        with tempfile.TemporaryDirectory() as data_dir:
            async with await open_store(None, data_dir) as embedded:
                for writers in writer_counts:
                    ours = await store_appends(embedded, writers, args.seconds)
                    print(f"embedded, {writers} writer(s): append {ours:8.0f}/s")
                read_ms, rate, total = await read_figures(embedded)
                print(f"embedded: read 2,000 events {read_ms:.2f} ms; feed {rate:,.0f} events/s")
    finally:
        if not args.keep:
            with psycopg.connect(admin, autocommit=True) as conn:
                conn.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)'.encode())


if __name__ == "__main__":
    asyncio.run(main())
