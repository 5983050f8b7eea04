"""Projections: rebuild from zero, and lag under the REST load. Prints figures
(docs/BENCHMARKS.md, "Projections"); no test runs it and nothing asserts a duration.

    .venv/bin/python benchmarks/projection_bench.py rebuild [--events 100000] [--only lobby]
    .venv/bin/python benchmarks/projection_bench.py lag [--rate 2000] [--seconds 20]

rebuild: plays games with bots (domain/simulate.py), appends them interleaved into a
throw-away PostgreSQL database, then times, in the same run: a raw read of the whole feed
(pages of 1,000, the floor any projection pays), a rebuild of every projection from
position zero into Redis (database 14, a key prefix of its own, removed after) and into
memory, each on its own and then all of them together (one projector, as after a flush;
`--only NAME...` rebuilds just those, on their own). Each figure is the best of `--repeat`,
beside its ratio to the raw feed read and the rate of the slowest run (the spread).

lag: runs benchmarks/api_load.py (paced phase only) three times: the service reading Redis
with no projector running (the baseline), the same with a projector process
(benchmarks/projection_lag.py: the projector, timing each event from its recorded time to
the commit of its batch), and the embedded default (in-memory projectors inside each worker).
Prints the action rate of each, its ratio to the baseline, and the lag percentiles.
"""

from __future__ import annotations

import argparse
import asyncio
import re
import secrets
import subprocess
import sys
import time
from pathlib import Path

import psycopg
from psycopg import conninfo

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from events.migrate import migrate  # noqa: E402
from events.store import START, PostgresStore  # noqa: E402
from projections.base import Projection  # noqa: E402
from projections.catalog import PROJECTIONS, fresh  # noqa: E402
from projections.memory import MemoryProjectionStore  # noqa: E402
from projections.projector import Projector  # noqa: E402
from projections.redis_store import RedisProjectionStore  # noqa: E402
from projections.store import ProjectionStore  # noqa: E402
from tests.support.played_games import append_interleaved, game_stream  # noqa: E402
from tests.support.redis_keys import forget  # noqa: E402

DEFAULT_DB = "postgresql://postgres@127.0.0.1:5432/test"
DEFAULT_REDIS = "redis://127.0.0.1:6379/14"


def cpu_model() -> str:
    out = subprocess.run(["lscpu"], capture_output=True, text=True, check=False).stdout
    found = re.search(r"Model name:\s*(.+)", out)
    return found.group(1).strip() if found else "unknown"


async def fill(url: str, events: int, seed: int) -> int:
    import random

    rng = random.Random(seed)
    store = await PostgresStore.open(url)
    total = 0
    try:
        while total < events:
            games = [game_stream(rng) for _ in range(50)]
            total += await append_interleaved(store, games, rng.randrange(1 << 30), most=40)
    finally:
        await store.close()
    return total


async def read_all(feed: PostgresStore) -> int:
    checkpoint, read = START, 0
    while page := await feed.read_feed(checkpoint, limit=1000):
        read += len(page)
        checkpoint = page[-1].checkpoint
    return read


async def rebuild(store: ProjectionStore, feed: PostgresStore, projection: Projection) -> None:
    projector = Projector([projection], store, feed, grace=0)
    await projector.build(projection, await store.alias(projection.name), "requested")


async def rebuild_all(store: ProjectionStore, feed: PostgresStore) -> None:
    """Every projection of the catalog rebuilt at once by one projector, as after a flush
    (its runners share the feed pages they read in step: events/feed.py)."""
    projections = fresh()
    projector = Projector(projections, store, feed, grace=0)
    live = [await store.alias(p.name) for p in projections]
    await asyncio.gather(
        *(projector.build(p, n, "requested") for p, n in zip(projections, live, strict=True))
    )


class Timing:
    """Wall time, this process's CPU time and Redis's CPU time, of the best run; `worst`: the
    wall time of the slowest (the spread on a shared machine)."""

    def __init__(self, wall: float, cpu: float, redis_cpu: float) -> None:
        self.wall, self.cpu, self.redis_cpu = wall, cpu, redis_cpu
        self.worst = wall


async def redis_cpu(url: str) -> float:
    import redis.asyncio as aioredis

    client = aioredis.Redis.from_url(url)
    try:
        info = await client.info("cpu")
    finally:
        await client.aclose()
    return float(info["used_cpu_user"]) + float(info["used_cpu_sys"])


def machine_busy() -> tuple[int, int]:
    """(busy, total) jiffies of the whole machine so far (/proc/stat)."""
    fields = [int(x) for x in Path("/proc/stat").read_text().split("\n")[0].split()[1:]]
    idle = fields[3] + fields[4]
    return sum(fields) - idle, sum(fields)


async def wait_quiet(limit: float, threshold: float = 0.25) -> float:
    """Wait at most `limit` s until the machine was under `threshold` busy for 2 s; the busy
    fraction last seen (other people's work on a shared machine skews every figure)."""
    deadline = time.monotonic() + limit
    while True:
        busy0, total0 = machine_busy()
        await asyncio.sleep(2)
        busy1, total1 = machine_busy()
        busy = (busy1 - busy0) / max(1, total1 - total0)
        if busy < threshold or time.monotonic() >= deadline:
            return busy
        print(f"  (machine {busy:.0%} busy; waiting)", flush=True)


QUIET_WAIT = 0.0
QUIET_BELOW = 0.25


async def best(repeat: int, work: object, redis_url: str) -> Timing:
    found: Timing | None = None
    for _ in range(repeat):
        if QUIET_WAIT:
            busy = await wait_quiet(QUIET_WAIT, QUIET_BELOW)
            print(f"  (machine {busy:.0%} busy before this run)", flush=True)
        redis_before = await redis_cpu(redis_url)
        cpu, start = time.process_time(), time.perf_counter()
        await work()  # type: ignore[operator]
        wall, cpu = time.perf_counter() - start, time.process_time() - cpu
        timing = Timing(wall, cpu, await redis_cpu(redis_url) - redis_before)
        worst = timing.wall if found is None else max(found.worst, timing.wall)
        if found is None or timing.wall < found.wall:
            found = timing
        found.worst = worst
    assert found is not None
    return found


async def memory_held(feed: PostgresStore) -> tuple[int, int]:
    """The games listed and the bytes the in-memory store holds after a rebuild."""
    import tracemalloc

    tracemalloc.start()
    before = tracemalloc.get_traced_memory()[0]
    store = MemoryProjectionStore()
    for projection in PROJECTIONS:
        await rebuild(store, feed, projection)
    held = tracemalloc.get_traced_memory()[0] - before
    tracemalloc.stop()
    page = await store.page("lobby", "all", limit=10_000_000)
    return len(page.entries), held


async def rebuild_bench(args: argparse.Namespace) -> None:
    name = f"fairway_projbench_{secrets.token_hex(4)}"
    with psycopg.connect(args.url, autocommit=True) as conn:
        conn.execute(f'CREATE DATABASE "{name}"'.encode())
    url = conninfo.make_conninfo(args.url, dbname=name)
    prefix = f"bench{secrets.token_hex(4)}"
    try:
        migrate(url)
        started = time.perf_counter()
        total = await fill(url, args.events, args.seed)
        print(f"appended {total:,} events in {time.perf_counter() - started:.1f} s")
        feed = await PostgresStore.open(url)
        redis_store = RedisProjectionStore.from_url(args.redis, prefix, timeout=30)
        try:
            raw = await best(args.repeat, lambda: read_all(feed), args.redis)
            rows = []
            chosen = [p for p in PROJECTIONS if not args.only or p.name in args.only]
            for projection in chosen:  # each projection on its own: its own rate
                rows.append(
                    (
                        f"{projection.name}: rebuild, in memory",
                        await best(
                            args.repeat,
                            lambda p=projection: rebuild(MemoryProjectionStore(), feed, type(p)()),
                            args.redis,
                        ),
                    )
                )
                rows.append(
                    (
                        f"{projection.name}: rebuild, Redis",
                        await best(
                            args.repeat,
                            lambda p=projection: rebuild(redis_store, feed, type(p)()),
                            args.redis,
                        ),
                    )
                )
            if not args.only:
                for label, store in (("memory", None), ("Redis", redis_store)):
                    rows.append(
                        (
                            f"all together: rebuild, {label}",
                            await best(
                                args.repeat,
                                lambda s=store: rebuild_all(s or MemoryProjectionStore(), feed),
                                args.redis,
                            ),
                        )
                    )
            held = await memory_held(feed)
        finally:
            await redis_store.close()
            await feed.close()
            await forget(args.redis, prefix)
        names = ", ".join(p.name for p in PROJECTIONS)
        print(f"CPU: {cpu_model()}; projections: {names}; {total:,} events; best of {args.repeat}")
        print(f"load average: {Path('/proc/loadavg').read_text().split()[:3]}")
        print(
            f"{'':34} {'events/s':>10} {'vs raw':>7} {'us CPU/event':>13} {'Redis us/event':>15}"
            f" {'slowest run':>12}"
        )
        for label, t in [("raw feed read (pages of 1,000)", raw), *rows]:
            print(
                f"{label:34} {total / t.wall:10,.0f} {raw.wall / t.wall:7.2f} "
                f"{t.cpu / total * 1e6:13.1f} {t.redis_cpu / total * 1e6:15.1f}"
                f" {total / t.worst:12,.0f}"
            )
        games, size = held
        print(f"in-memory store after rebuilding all: {size / 1e6:.1f} MB for {games:,} games")
    finally:
        with psycopg.connect(args.url, autocommit=True) as conn:
            conn.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)'.encode())


def load(args: argparse.Namespace, projector: str) -> str:
    command = [
        sys.executable,
        str(ROOT / "benchmarks" / "api_load.py"),
        "--phases",
        "paced",
        "--rate",
        str(args.rate),
        "--seconds",
        str(args.seconds),
        "--warmup",
        str(args.warmup),
        "--projector",
        projector,
        "--redis-url",
        args.redis,
        "--url",
        args.url,
        "--quiet-wait",
        str(args.quiet_wait),
    ]
    done = subprocess.run(command, cwd=ROOT, capture_output=True, text=True, check=False)
    if done.returncode != 0:
        raise SystemExit(f"api_load.py failed:\n{done.stdout}\n{done.stderr}")
    return done.stdout


def paced_rate(output: str) -> float:
    found = re.search(
        r"POST /actions, paced at [\d,]+/s: [\d,]+ actions in [\d.]+ s = ([\d,]+)/s", output
    )
    if not found:
        raise SystemExit(f"no paced rate in:\n{output}")
    return float(found.group(1).replace(",", ""))


def lag_bench(args: argparse.Namespace) -> None:
    print(f"CPU: {cpu_model()}; paced at {args.rate:,.0f} actions/s for {args.seconds:.0f} s")
    runs = {}
    for mode in ("none", "redis", "embedded"):
        output = load(args, mode)
        runs[mode] = paced_rate(output)
        lag = [line for line in output.splitlines() if line.startswith("projection lag")]
        print(f"{mode:9} actions/s {runs[mode]:9,.0f}  vs none {runs[mode] / runs['none']:.3f}")
        for line in lag:
            print(f"          {line}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("command", choices=["rebuild", "lag"])
    parser.add_argument("--url", default=DEFAULT_DB, help="any database on the server")
    parser.add_argument("--redis", default=DEFAULT_REDIS)
    parser.add_argument("--events", type=int, default=100_000)
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--rate", type=float, default=2000)
    parser.add_argument("--seconds", type=float, default=20)
    parser.add_argument("--warmup", type=float, default=5)
    parser.add_argument(
        "--only", nargs="*", default=[], help="rebuild only these projections (no 'all' rows)"
    )
    parser.add_argument("--quiet-below", type=float, default=0.25, help="busy fraction")
    parser.add_argument(
        "--quiet-wait", type=float, default=0, help="wait up to this many s for a quiet machine"
    )
    args = parser.parse_args()
    if args.command == "rebuild":
        global QUIET_WAIT, QUIET_BELOW
        QUIET_WAIT, QUIET_BELOW = args.quiet_wait, args.quiet_below
        asyncio.run(rebuild_bench(args))
    else:
        lag_bench(args)


if __name__ == "__main__":
    main()
