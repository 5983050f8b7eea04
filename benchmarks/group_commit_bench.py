"""Group commit on vs off (issue 19, lever 1): appends/s and CPU per append of the PostgreSQL
store at 1, 8 and 32 concurrent appenders, measured in the same run.

    uv run python benchmarks/group_commit_bench.py [--url postgresql://postgres@127.0.0.1:5432/x]
        [--writers 1,8,32] [--seconds 3] [--rounds 3] [--pool 10] [--quiet-wait 20]

It makes a throw-away database next to the one in --url (default: $DATABASE_URL, else
127.0.0.1:5432 user postgres), migrates it, and runs rounds in which the two stores (one with
group commit, one without, same pool size: the service's default 10) take turns, the order
alternating by round. Each appender owns a stream and appends one event at a time, waiting
for each answer (closed loop). CPU per append: this process (the store's client side) plus
this database's PostgreSQL backends and the server's WAL writer, checkpointer and background
writer, from /proc. It prints the CPU model and load average; on a shared machine the
absolute figures wander, so compare the on/off ratios, taken per round (same load).
"""

from __future__ import annotations

import argparse
import asyncio
import os
import secrets
import statistics
import sys
import time
import uuid
from pathlib import Path

import psycopg
from psycopg import conninfo

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from benchmarks.load.processes import postgres_pids, proc_cpu, self_cpu, wait_quiet
from benchmarks.store_bench import event
from events.migrate import migrate
from events.store import PostgresStore


def cpu_model() -> str:
    for line in Path("/proc/cpuinfo").read_text().splitlines():
        if line.startswith("model name"):
            return line.split(":", 1)[1].strip()
    return "unknown"


def load() -> str:
    return " ".join(f"{x:.2f}" for x in os.getloadavg())


class Run:
    """One measurement: appends/s, and CPU µs per append (client, PostgreSQL)."""

    def __init__(self, rate: float, client_us: float, server_us: float, batch: float) -> None:
        self.rate = rate
        self.client_us = client_us
        self.server_us = server_us
        self.batch = batch

    @property
    def cpu_us(self) -> float:
        return self.client_us + self.server_us


async def measure(store: PostgresStore, writers: int, seconds: float, pids: list[int]) -> Run:
    streams = [f"bench:{uuid.uuid4().hex}" for _ in range(writers)]
    versions = [0] * writers
    sizes: list[int] = []
    store.append_batches.append(sizes.append)
    stop = time.perf_counter() + seconds

    async def appender(w: int) -> None:
        while time.perf_counter() < stop:
            await store.append(streams[w], versions[w], [event(versions[w])])
            versions[w] += 1

    server0 = sum(proc_cpu(pid) for pid in pids)
    client0, wall0 = self_cpu(), time.perf_counter()
    await asyncio.gather(*(appender(w) for w in range(writers)))
    wall = time.perf_counter() - wall0
    client = self_cpu() - client0
    server = sum(proc_cpu(pid) for pid in pids) - server0
    store.append_batches.remove(sizes.append)
    appends = sum(versions)
    return Run(
        appends / wall,
        client / appends * 1e6,
        server / appends * 1e6,
        appends / max(1, len(sizes)),
    )


def line(label: str, runs: list[Run]) -> str:
    rate = statistics.median(r.rate for r in runs)
    client = statistics.median(r.client_us for r in runs)
    server = statistics.median(r.server_us for r in runs)
    batch = statistics.median(r.batch for r in runs)
    each = ", ".join(f"{r.rate:.0f}" for r in runs)
    return (
        f"  {label:<4} {rate:7.0f} appends/s ({each}); CPU/append {client + server:5.0f} µs"
        f" (client {client:.0f} + PostgreSQL {server:.0f}); appends per commit {batch:.1f}"
    )


async def compare(
    on: PostgresStore, off: PostgresStore, writers: int, pids: list[int], args: argparse.Namespace
) -> None:
    runs: dict[str, list[Run]] = {"on": [], "off": []}
    for round_ in range(args.rounds):
        if args.quiet_wait > 0:
            await wait_quiet(args.quiet_wait)
        print(f"  (round {round_ + 1}: load average {load()})")
        order = ("on", "off") if round_ % 2 == 0 else ("off", "on")
        for kind in order:
            store = on if kind == "on" else off
            runs[kind].append(await measure(store, writers, args.seconds, pids))
    print(f"{writers} appender(s), median of {args.rounds} rounds:")
    print(line("off", runs["off"]))
    print(line("on", runs["on"]))
    rate = [a.rate / b.rate for a, b in zip(runs["on"], runs["off"], strict=True)]
    cpu = [a.cpu_us / b.cpu_us for a, b in zip(runs["on"], runs["off"], strict=True)]
    print(
        f"  on/off: appends/s x{statistics.median(rate):.2f}"
        f" ({', '.join(f'{r:.2f}' for r in rate)}); CPU per append x{statistics.median(cpu):.2f}"
        f" ({', '.join(f'{r:.2f}' for r in cpu)})\n"
    )


async def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    default = os.environ.get("DATABASE_URL", "postgresql://postgres@127.0.0.1:5432/postgres")
    parser.add_argument("--url", default=default, help="any database on the server to use")
    parser.add_argument("--writers", default="1,8,32")
    parser.add_argument("--seconds", type=float, default=3.0)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--pool", type=int, default=10, help="pool size of each store")
    parser.add_argument(
        "--quiet-wait", type=float, default=10.0, help="wait up to this long for a quiet machine"
    )
    args = parser.parse_args()

    name = f"fairway_bench_{secrets.token_hex(4)}"
    with psycopg.connect(args.url, autocommit=True) as conn:
        conn.execute(f'CREATE DATABASE "{name}"'.encode())
    url = conninfo.make_conninfo(args.url, dbname=name)
    try:
        migrate(url)
        print(f"CPU: {cpu_model()}, {os.cpu_count()} CPUs; load average {load()}")
        print(f"{args.seconds:g} s per run, one event per append, a stream per appender\n")
        sizes = {"min_size": args.pool, "max_size": args.pool}
        async with (
            await PostgresStore.open(url, group_commit=True, **sizes) as on,
            await PostgresStore.open(url, group_commit=False, **sizes) as off,
        ):
            for store in (on, off):  # warm each pool's connections and prepared plans
                await measure(store, args.pool, 0.5, [])
            pids = postgres_pids(url)()
            for writers in (int(w) for w in args.writers.split(",")):
                await compare(on, off, writers, pids, args)
        print(f"load average at the end: {load()}")
    finally:
        with psycopg.connect(args.url, autocommit=True) as conn:
            conn.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)'.encode())


if __name__ == "__main__":
    asyncio.run(main())
