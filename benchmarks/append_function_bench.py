"""The append function before and after migration 0008 (issue 19, lever 6), in the same run:
one database migrated to 0007 (the old fairway_append), one to the head (the new one), same
client code, rounds interleaved, the order alternating by round.

    uv run python benchmarks/append_function_bench.py [--url postgresql://postgres@127.0.0.1/x]
        [--writers 1,8,32] [--seconds 3] [--rounds 3] [--pool 10] [--quiet-wait 10]

Three measurements:
- the function alone: one backend calls the one-event overload 6,000 times in one
  transaction (no round trips, no commits), then the array overload with four events 3,000
  times; its CPU from /proc, per call;
- pgbench -M prepared calling the one-event overload, one transaction each (C client);
- the store's appends (one event each, a stream per appender, closed loop) with group commit
  on and off, at each --writers: appends/s and CPU per append, this process (the store's
  client side) plus the database's backends and the server's WAL writer, checkpointer and
  background writer.
The CPU model and load average are printed; compare the ratios, taken per round. The store
calls the batch `fairway_append_together` (0008); the old database gets it as 0007's
`fairway_append_batch` under that name, body unchanged.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import secrets
import statistics
import sys
from pathlib import Path

import psycopg
from psycopg import conninfo

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from benchmarks.group_commit_bench import Run, cpu_model, line, load, measure
from benchmarks.load.processes import postgres_pids, proc_cpu, wait_quiet
from benchmarks.store_bench import PGBENCH_FUNCTION, RAW_DATA, pgbench
from events.migrate import MIGRATIONS_DIR, migrate
from events.store import PostgresStore

OLD = 7  # 0007_append_batch: the head before 0008
KINDS = ("old", "new")
CALLS = {  # per call: (times, statement in a DO block's loop over i)
    "one event": (
        6000,
        "PERFORM * FROM fairway_append(s, i, gen_random_uuid(), 'hand.ended', 1, d, '{}');",
    ),
    "four events": (
        3000,
        "PERFORM * FROM fairway_append(s, 4 * i, ARRAY[gen_random_uuid(), gen_random_uuid(),"
        " gen_random_uuid(), gen_random_uuid()], ARRAY['hand.ended', 'hand.ended',"
        " 'hand.ended', 'hand.ended'], ARRAY[1, 1, 1, 1], ARRAY[d, d, d, d],"
        " ARRAY['{}', '{}', '{}', '{}']);",
    ),
}


def function_us(url: str, times: int, call: str) -> float:
    """Backend CPU µs per call of `call`, `times` calls in one transaction (rolled back)."""
    body = (
        f"DO $$ DECLARE s text := 'bench:' || md5(random()::text); d text := '{RAW_DATA}';"
        f" BEGIN FOR i IN 0..{times - 1} LOOP {call} END LOOP; END $$"
    )
    with psycopg.connect(url) as conn:
        (pid,) = conn.execute("SELECT pg_backend_pid()").fetchone() or (0,)
        conn.execute(body.encode())  # warm: plans, caches
        conn.rollback()
        before = proc_cpu(pid)
        conn.execute(body.encode())
        spent = proc_cpu(pid) - before
        conn.rollback()
    return spent / times * 1e6


def ratio_line(label: str, new: list[float], old: list[float]) -> str:
    each = [n / o for n, o in zip(new, old, strict=True)]
    return (
        f"  {label}: old {statistics.median(old):.1f}, new {statistics.median(new):.1f};"
        f" new/old x{statistics.median(each):.2f} ({', '.join(f'{r:.2f}' for r in each)})"
    )


def order(round_: int) -> tuple[str, ...]:
    return KINDS if round_ % 2 == 0 else KINDS[::-1]


async def functions(urls: dict[str, str], args: argparse.Namespace) -> None:
    for label, (times, call) in CALLS.items():
        us: dict[str, list[float]] = {kind: [] for kind in KINDS}
        for round_ in range(args.rounds):
            for kind in order(round_):
                us[kind].append(function_us(urls[kind], times, call))
        print(ratio_line(f"fairway_append, {label}: backend CPU µs per call", us["new"], us["old"]))
    for clients in (1, 8):
        tps: dict[str, list[float]] = {kind: [] for kind in KINDS}
        for round_ in range(args.rounds):
            for kind in order(round_):
                tps[kind].append(pgbench(urls[kind], clients, args.seconds, PGBENCH_FUNCTION))
        print(ratio_line(f"pgbench, {clients} client(s): appends/s", tps["new"], tps["old"]))
    print(f"  (load average {load()})\n")


async def stores(urls: dict[str, str], args: argparse.Namespace) -> None:
    sizes = {"min_size": args.pool, "max_size": args.pool}
    for group_commit in (True, False):
        opened = {
            kind: await PostgresStore.open(urls[kind], group_commit=group_commit, **sizes)
            for kind in KINDS
        }
        try:
            pids = {}
            for kind, store in opened.items():  # warm each pool's connections and plans
                await measure(store, args.pool, 0.5, [])
                pids[kind] = postgres_pids(urls[kind])()
            for writers in (int(w) for w in args.writers.split(",")):
                runs: dict[str, list[Run]] = {kind: [] for kind in KINDS}
                for round_ in range(args.rounds):
                    if args.quiet_wait > 0:
                        await wait_quiet(args.quiet_wait)
                    for kind in order(round_):
                        store = opened[kind]
                        runs[kind].append(await measure(store, writers, args.seconds, pids[kind]))
                mode = "on" if group_commit else "off"
                print(f"store, group commit {mode}, {writers} appender(s) (load {load()}):")
                print(line("old", runs["old"]))
                print(line("new", runs["new"]))
                print(
                    ratio_line(
                        "appends/s", [r.rate for r in runs["new"]], [r.rate for r in runs["old"]]
                    )
                )
                print(
                    ratio_line(
                        "CPU µs per append",
                        [r.cpu_us for r in runs["new"]],
                        [r.cpu_us for r in runs["old"]],
                    )
                )
                print(
                    ratio_line(
                        "PostgreSQL CPU µs per append",
                        [r.server_us for r in runs["new"]],
                        [r.server_us for r in runs["old"]],
                    )
                    + "\n"
                )
        finally:
            for store in opened.values():
                await store.close()


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

    names = {kind: f"fairway_bench_{kind}_{secrets.token_hex(4)}" for kind in KINDS}
    urls = {kind: conninfo.make_conninfo(args.url, dbname=name) for kind, name in names.items()}
    with psycopg.connect(args.url, autocommit=True) as conn:
        for name in names.values():
            conn.execute(f'CREATE DATABASE "{name}"'.encode())
    try:
        migrate(urls["old"], through=OLD)
        with psycopg.connect(urls["old"], autocommit=True) as conn:
            batch = (MIGRATIONS_DIR / "0007_append_batch.sql").read_text(encoding="utf-8")
            conn.execute(batch.replace("fairway_append_batch", "fairway_append_together").encode())
        migrate(urls["new"])
        print(f"CPU: {cpu_model()}, {os.cpu_count()} CPUs; load average {load()}")
        print(f"old: migrated to {OLD:04d}; new: to the head. {args.seconds:g} s per run\n")
        await functions(urls, args)
        await stores(urls, args)
        print(f"load average at the end: {load()}")
    finally:
        with psycopg.connect(args.url, autocommit=True) as conn:
            for name in names.values():
                conn.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)'.encode())


if __name__ == "__main__":
    asyncio.run(main())
