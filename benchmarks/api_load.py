"""REST API load: bots play concurrent games over HTTP against PostgreSQL; prints figures
(docs/BENCHMARKS.md, "REST API load"). No test runs it and nothing asserts a duration.

    uv run python benchmarks/api_load.py [--workers 2] [--games 100] [--seconds 20]
        [--warmup 5] [--rate 2000] [--variant hang-ten] [--bot scripted|random]
        [--client raw|httpx] [--depth 2000] [--phases closed,echo,paced,depth]
        [--url postgresql://postgres@127.0.0.1:5432/test] [--quiet-wait 300] [--keep]
        [--projector embedded|none|redis] [--redis-url redis://127.0.0.1:6379/14]

It creates a throw-away database next to the one in --url (default: $DATABASE_URL, else
127.0.0.1:5432 user postgres), migrates it, starts `fairway serve --workers N` on a free
loopback port (rate limits off, log level warning), waits for /ready, opens one keep-alive
connection per game (spread evenly over the workers: see `balance`), then runs:

- closed: `--games` games played at once, a task per game holding every seat token. It
  picks the seat from `status.to_act` of the last action response (no GET per action) and
  posts one action at a time, as fast as answers come. `--bot scripted` knows enough of
  Hang Ten and Tens (setup flips, draw from the stock, replace each position in turn, so
  hands end by a player going out) to need GET /me only when refused; `--bot random` asks
  GET /me before every action and picks a legal action at random. A finished game is
  replaced by a new one. Over the window: POST /actions per second, latency p50/p90/p99 as
  the client sees it, the p99 of each second (stalls vs spread-out tail), errors.
- echo: the same connections hammer GET /health.
- paced: the games again, open loop at `--rate` actions/s in all, each bot at fixed times;
  latency counts from the scheduled send time, so a stalled server is not hidden
  (coordinated omission). The issue's target is checked here.
- depth: one game driven past `--depth` events one request at a time; its POST /actions
  latency, interleaved with actions on young games (events ~15..100), median of each.

CPU: utime+stime (/proc/<pid>/stat) of the server's process tree (supervisor and workers),
of this database's PostgreSQL backends plus the WAL writer and checkpointer, of this load
generator, and of every process on the machine, per window: server CPU per action vs per
GET /health. The load generator shares the machine, so its CPU is printed; "anything else"
is other people's work, and a window where it passes 10% is flagged. `--quiet-wait S` waits
(up to S s) for a quiet machine before each window.

The raw client (`--client raw`) is a minimal asyncio HTTP/1.1 client, about 50 us of CPU a
request; httpx costs about 1 ms a request here, more than the server, and is kept only for
comparison (`--client httpx`).

Trying server-side changes without touching the project: `--server-path DIR` puts DIR
first on the server's PYTHONPATH, e.g. a throw-away venv holding uvloop and httptools, which
uvicorn then picks up (`uv venv /tmp/prof -p .venv/bin/python && uv pip install -p
/tmp/prof/bin/python uvloop httptools py-spy`, then `--server-path
/tmp/prof/lib/python3.11/site-packages`), or a `sitecustomize.py` that patches something.
`--nodelay-patch` is such a patch, for trees before 4fae87d: uvicorn's listening socket made
to report IPPROTO_TCP so that asyncio sets TCP_NODELAY (without it, with --workers > 1, every
response waited ~44 ms for a delayed ACK); since service/cli/serve.py does this itself it is a
no-op.
`--py-spy /tmp/prof/bin/py-spy` records the workers during the closed window (raw collapsed
stacks in --profile-dir; py-spy counts a runnable-but-preempted worker as busy, so on a
saturated machine it over-weights syscalls: `perf record -e cpu-clock -g -p <worker>` gives
the true CPU split between the interpreter and the kernel); `--py-spy-gil` keeps only the samples
holding the GIL, which is what to read on a loaded machine (docs/BENCHMARKS.md, issue 19).

This file is the script (its options, the run, the order of the windows); its parts are in
benchmarks/load/: client, pacing, bots, processes (CPU accounting), server, phases, stats,
report.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import secrets
import shutil
import subprocess
import sys
import tempfile
from collections import Counter
from pathlib import Path

import psycopg
from psycopg import conninfo

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from benchmarks.load.bots import SCRIPTED  # noqa: E402
from benchmarks.load.client import HOST, Client, HttpxClient, RawClient  # noqa: E402
from benchmarks.load.phases import action_phase, depth_phase, echo_phase  # noqa: E402
from benchmarks.load.processes import (  # noqa: E402
    CpuMeter,
    connection_owners,
    postgres_pids,
    wait_quiet,
)
from benchmarks.load.report import (  # noqa: E402
    TARGET_RATE,
    report_depth,
    report_summary,
    report_window,
)
from benchmarks.load.server import (  # noqa: E402
    NODELAY_PATCH,
    PySpy,
    balance,
    free_port,
    start_projector,
    start_server,
    stop_projector,
    stop_server,
    wait_ready,
    worker_pids,
)
from benchmarks.load.stats import percentile  # noqa: E402
from events.migrate import migrate  # noqa: E402


async def measure(
    args: argparse.Namespace, url: str, name: str, port: int, server: subprocess.Popen[bytes]
) -> dict[str, float]:
    await wait_ready(port, server, args.workers)
    meter = CpuMeter(server.pid, postgres_pids(url))
    workers = worker_pids(server, args.workers)
    with psycopg.connect(url) as conn:
        pg = conn.execute("SHOW server_version").fetchone()
    print(
        f"Fairway REST API load: {os.cpu_count()} CPUs, Python {sys.version.split()[0]},"
        f" PostgreSQL {pg[0] if pg else '?'}, database {name}"
    )
    print(
        f"server: fairway serve --workers {args.workers} (supervisor {server.pid}, workers"
        f" {workers}), pool {args.pool_size}/worker"
        f"{', TCP_NODELAY patch' if args.nodelay_patch else ''}"
        f"{', PYTHONPATH+=' + args.server_path if args.server_path else ''}"
    )
    print(
        f"load: {args.games} games at once, variant {args.variant}, {args.seats} seats,"
        f" bot {args.bot}, client {args.client}; windows of {args.seconds:.0f} s after"
        f" {args.warmup:.0f} s of warm-up: closed loop"
        f"{f', then paced at {args.rate:,.0f}/s' if args.rate else ''}"
    )

    shared = None
    clients: list[Client]
    if args.client == "httpx":
        import httpx

        shared = httpx.AsyncClient(
            base_url=f"http://{HOST}:{port}",
            limits=httpx.Limits(max_connections=args.games, max_keepalive_connections=args.games),
            timeout=60,
        )
        clients = [HttpxClient(shared) for _ in range(args.games)]
    else:
        raw = [RawClient(port) for _ in range(args.games)]
        if args.workers > 1 and not args.no_balance:
            held = await balance(raw, workers, port)
        else:
            for c in raw:
                await c.call("GET", "/health")
            held = dict(Counter(connection_owners(workers, port).values()))
        print(f"connections per worker: {held}")
        clients = list(raw)
    print()

    results: dict[str, float] = {}
    phases = set(args.phases.split(","))
    try:
        if "closed" in phases:
            spy = PySpy(args.py_spy, Path(args.profile_dir), args.seconds, args.py_spy_gil)
            if args.quiet_wait:
                await wait_quiet(args.quiet_wait)
            asyncio.get_running_loop().call_later(args.warmup, spy.start, workers)
            stats, cpu = await action_phase(args, clients, meter, 0.0)
            spy.wait()
            results["action_cpu"] = report_window("POST /actions, closed loop", stats, cpu)
            results["rate"] = stats.actions / cpu.wall
            results["p99"] = percentile(sorted(stats.action_latency), 99)
            results["errors"] = sum(stats.action_errors.values()) + sum(stats.failures.values())
            if args.py_spy:
                print(f"  py-spy profiles: {args.profile_dir}/worker-<pid>.txt")
            print()
        if "echo" in phases:
            if args.quiet_wait:
                await wait_quiet(args.quiet_wait)
            stats, cpu = await echo_phase(args, clients, meter)
            results["echo_cpu"] = report_window("GET /health, closed loop", stats, cpu, "request")
            print()
        if "paced" in phases and args.rate:
            if args.quiet_wait:
                await wait_quiet(args.quiet_wait)
            stats, cpu = await action_phase(args, clients, meter, args.rate)
            report_window(f"POST /actions, paced at {args.rate:,.0f}/s", stats, cpu)
            print("  (latency counted from each request's scheduled send time)")
            results["paced_rate"] = stats.actions / cpu.wall
            results["paced_p99"] = percentile(sorted(stats.action_latency), 99)
            results["paced_errors"] = sum(stats.action_errors.values()) + sum(
                stats.failures.values()
            )
            print()
        if "depth" in phases and args.depth:
            if args.quiet_wait:
                await wait_quiet(args.quiet_wait)
            client: Client = RawClient(port) if args.client == "raw" else clients[0]
            results["depth_ratio"] = report_depth(await depth_phase(args, client))
            await client.close()
            print()
    finally:
        for each in clients:
            await each.close()
        if shared is not None:
            await shared.aclose()
    return results


async def run(args: argparse.Namespace) -> None:
    name = f"fairway_bench_{secrets.token_hex(4)}"
    with psycopg.connect(args.url, autocommit=True) as conn:
        conn.execute(f'CREATE DATABASE "{name}"'.encode())
    url = conninfo.make_conninfo(args.url, dbname=name)
    server: subprocess.Popen[bytes] | None = None
    patch_dir = None
    try:
        migrate(url)
        if args.nodelay_patch:
            patch_dir = tempfile.mkdtemp(prefix="fairway-nodelay-")
            Path(patch_dir, "sitecustomize.py").write_text(NODELAY_PATCH)
        port = free_port()
        server = start_server(args, url, port, patch_dir)
        projector = start_projector(args, url)
        try:
            results = await measure(args, url, name, port, server)
        finally:
            stop_projector(projector)
        report_summary(args, results)
    finally:
        if server is not None:
            stop_server(server)
        if patch_dir is not None:
            shutil.rmtree(patch_dir, ignore_errors=True)
        if not args.keep:
            with psycopg.connect(args.url, autocommit=True) as conn:
                conn.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)'.encode())


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    default = os.environ.get("DATABASE_URL", "postgresql://postgres@127.0.0.1:5432/test")
    parser.add_argument("--url", default=default, help="any database on the server to use")
    parser.add_argument("--workers", type=int, default=2, help="fairway serve --workers")
    parser.add_argument("--games", type=int, default=100, help="games (connections) at once")
    parser.add_argument("--seconds", type=float, default=20.0, help="measured window")
    parser.add_argument("--warmup", type=float, default=5.0)
    parser.add_argument(
        "--variant",
        default="hang-ten",
        choices=["hang-ten", "tens", "golf", "basketball", "tens-shedding"],
    )
    parser.add_argument("--seats", type=int, default=4)
    parser.add_argument("--hands", type=int, default=None, help="game option `hands`")
    parser.add_argument("--turn-limit", type=int, default=None, help="game option `turn_limit`")
    parser.add_argument(
        "--bot",
        choices=["scripted", "random"],
        default="scripted",
        help="scripted: GET /me only when unsure (Hang Ten, Tens);"
        " random: GET /me before every action",
    )
    parser.add_argument("--client", choices=["raw", "httpx"], default="raw")
    parser.add_argument(
        "--rate",
        type=float,
        default=float(TARGET_RATE),
        help="actions/s of the paced (open-loop) window, latency counted from each request's"
        " scheduled send time; 0 skips it",
    )
    parser.add_argument(
        "--nodelay-patch",
        action="store_true",
        help="start the server with uvicorn's listening socket fixed to set TCP_NODELAY"
        " (service/cli/serve.py does it itself since 4fae87d)",
    )
    parser.add_argument("--pool-size", type=int, default=10, help="FAIRWAY_POOL_SIZE")
    parser.add_argument(
        "--group-commit", choices=["on", "off"], default="on", help="FAIRWAY_GROUP_COMMIT"
    )
    parser.add_argument("--depth", type=int, default=2000, help="0 skips the depth phase")
    parser.add_argument("--depth-samples", type=int, default=200)
    parser.add_argument(
        "--phases",
        default="closed,echo,paced,depth",
        help="which windows to run, of closed (POST /actions as fast as answered), echo (GET"
        " /health likewise), paced (POST /actions at --rate), depth",
    )
    parser.add_argument("--py-spy", default=None, help="py-spy executable: profile the workers")
    parser.add_argument(
        "--py-spy-gil",
        action="store_true",
        help="py-spy only the samples holding the GIL (what the interpreter runs)",
    )
    parser.add_argument("--profile-dir", default="/tmp/fairway-api-load")
    parser.add_argument(
        "--server-path",
        default=None,
        help="prepend to the server's PYTHONPATH (e.g. uvloop + httptools)",
    )
    parser.add_argument(
        "--no-balance",
        action="store_true",
        help="leave the bots' connections where the workers accepted them",
    )
    parser.add_argument(
        "--quiet-wait",
        type=float,
        default=0.0,
        help="before each phase, wait up to this many s for the machine to be"
        " idle (shared machines)",
    )
    parser.add_argument(
        "--projector",
        choices=["embedded", "none", "redis"],
        default="embedded",
        help="embedded: the default in-memory projectors; none: REDIS_URL set, no projector; "
        "redis: REDIS_URL and a projector process timing its lag",
    )
    parser.add_argument("--redis-url", default="redis://127.0.0.1:6379/14")
    parser.add_argument("--keep", action="store_true", help="keep the benchmark database")
    parser.add_argument("--verbose", action="store_true", help="show the server's stdout")
    args = parser.parse_args()
    args.redis_prefix = f"bench{secrets.token_hex(4)}"
    if args.variant not in SCRIPTED and args.bot == "scripted":
        print(f"note: no script for {args.variant}; every action asks GET /me first")
    asyncio.run(run(args))


if __name__ == "__main__":
    main()
