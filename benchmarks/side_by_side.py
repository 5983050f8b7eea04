"""Side by side with boardgame.io (issue 19): Fairway and boardgame.io 0.50.2 played by the
same bots over HTTP on this machine, rounds interleaved; prints figures (docs/BENCHMARKS.md,
"Side by side with boardgame.io (issue 19)"). No test runs it and nothing asserts a duration.

    .venv/bin/python benchmarks/side_by_side.py [--rounds 3] [--seconds 20] [--warmup 5]
        [--games 100] [--workers 2] [--paced RATE] [--systems fairway,bgio-memory,bgio-postgres]
        [--url postgresql://postgres@127.0.0.1:5432/test] [--quiet-wait 0]

The systems, all started once and kept running for the whole run:

- fairway: `fairway serve --workers N` on a throw-away PostgreSQL database, exactly as
  benchmarks/api_load.py starts it (rate limits off, log level warning, the connections
  spread evenly over the workers). An action is answered after its events are committed,
  chained and signed, with the seat's new view and legal actions.
- bgio-memory: boardgame.io's own Server (benchmarks/bgio/server.js) with its in-memory
  storage; bgio-postgres: the same on a throw-away database through bgio-postgres, the
  community PostgreSQL adapter. Its game (benchmarks/bgio/game.js) does Hang Ten's work per
  move: a 2x5 layout per player, draw and replace, a playerView hiding the face-down cards and
  the stock. A move goes through boardgame.io's Master (its move processing, storage and
  playerView) and is answered, after the write, with the seat's view and legal actions.
  `npm ci` runs in benchmarks/bgio/ first when its node_modules is missing.

Each round runs every system in turn (A, B, C, A, B, C, ...): fresh connections, `--games`
games at once played by benchmarks/load's scripted Hang Ten bots (one keep-alive connection
and one action in flight per game, closed loop; `--paced RATE` plays RATE actions/s in all
instead, latency counted from each scheduled send time), `--warmup` s, then a window of
`--seconds` s. Per window: actions/s, p99 latency, the server's CPU per action (its whole
process tree, utime+stime from /proc) and PostgreSQL's (this database's backends plus the WAL
writer, checkpointer and background writer), as benchmarks/load/processes.py counts them. Per
system: the median of the rounds and the range; then Fairway's ratios to each boardgame.io
system (of the medians, with the range of the same-round ratios). The CPU model and the load
average are printed: on a shared machine, only ratios measured in one run compare.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import secrets
import statistics
import subprocess
import sys
import tempfile
from dataclasses import dataclass, field
from pathlib import Path

import psycopg
from psycopg import conninfo

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from benchmarks.load.bgio import (  # noqa: E402
    ensure_installed,
    open_bgio_table,
    start_bgio,
    stop_bgio,
    wait_health,
)
from benchmarks.load.bots import Opener, open_table  # noqa: E402
from benchmarks.load.client import Client, RawClient  # noqa: E402
from benchmarks.load.phases import action_phase  # noqa: E402
from benchmarks.load.processes import CpuMeter, postgres_pids, wait_quiet  # noqa: E402
from benchmarks.load.server import (  # noqa: E402
    balance,
    free_port,
    start_server,
    stop_server,
    wait_ready,
    worker_pids,
)
from benchmarks.load.stats import percentile  # noqa: E402
from events.migrate import migrate  # noqa: E402

SYSTEMS = ("fairway", "bgio-memory", "bgio-postgres")


@dataclass
class Window:
    rate: float
    p99: float
    server_us: float
    postgres_us: float
    other: float
    """Share of the machine other people's work took during the window."""
    errors: int
    why: str
    """The kinds of errors, if any."""


@dataclass
class System:
    name: str
    label: str
    port: int
    server: subprocess.Popen[bytes]
    meter: CpuMeter
    opener: Opener
    uses_postgres: bool
    workers: list[int] = field(default_factory=list)
    """Fairway's API workers, over which the connections are spread."""
    windows: list[Window] = field(default_factory=list)

    async def clients(self, games: int) -> list[Client]:
        raw = [RawClient(self.port) for _ in range(games)]
        if len(self.workers) > 1:
            await balance(raw, self.workers, self.port)
        return list(raw)


def create_database(admin_url: str, prefix: str) -> str:
    name = f"{prefix}_{secrets.token_hex(4)}"
    with psycopg.connect(admin_url, autocommit=True) as conn:
        conn.execute(f'CREATE DATABASE "{name}"'.encode())
    return conninfo.make_conninfo(admin_url, dbname=name)


def drop_database(admin_url: str, url: str) -> None:
    name = conninfo.conninfo_to_dict(url)["dbname"]
    with psycopg.connect(admin_url, autocommit=True) as conn:
        conn.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)'.encode())


async def start(name: str, args: argparse.Namespace, databases: list[str], log: Path) -> System:
    """One system started on a free port and answering; its databases added to `databases`."""
    port = free_port()
    if name == "fairway":
        url = create_database(args.url, "fairway_sbs")
        databases.append(url)
        migrate(url)
        server = start_server(args, url, port, None)
        await wait_ready(port, server, args.workers)
        meter = CpuMeter(server.pid, postgres_pids(url))
        label = f"Fairway, PostgreSQL, {args.workers} workers"
        workers = worker_pids(server, args.workers)
        return System(name, label, port, server, meter, open_table, True, workers)
    if name == "bgio-memory":
        server = start_bgio(port, None, 0, log)
        await wait_health(port, server, name)
        meter = CpuMeter(server.pid, list)
        return System(name, "boardgame.io in memory", port, server, meter, open_bgio_table, False)
    url = create_database(args.url, "bgio_sbs")
    databases.append(url)
    server = start_bgio(port, url, args.pool_size, log)
    await wait_health(port, server, name)
    meter = CpuMeter(server.pid, postgres_pids(url))
    return System(name, "boardgame.io on PostgreSQL", port, server, meter, open_bgio_table, True)


async def one_window(system: System, args: argparse.Namespace) -> Window:
    if args.quiet_wait:
        await wait_quiet(args.quiet_wait)
    clients = await system.clients(args.games)
    try:
        stats, cpu = await action_phase(
            args, clients, system.meter, args.paced, system.opener, all_opened=True
        )
    finally:
        for client in clients:
            await client.close()
    actions = max(1, stats.actions)
    return Window(
        rate=stats.actions / cpu.wall,
        p99=percentile(sorted(stats.action_latency), 99),
        server_us=cpu.server / actions * 1e6,
        postgres_us=cpu.postgres / actions * 1e6,
        other=cpu.other / cpu.machine_capacity,
        errors=sum(stats.action_errors.values()) + sum(stats.failures.values()),
        why=f" {dict(stats.action_errors)} {stats.failures.most_common(3)}"
        if stats.action_errors or stats.failures
        else "",
    )


def spread(values: list[float], fmt: str = ",.0f") -> str:
    return f"{statistics.median(values):{fmt}} [{min(values):{fmt}}-{max(values):{fmt}}]"


def report(systems: list[System], args: argparse.Namespace) -> None:
    mode = f"paced at {args.paced:,.0f}/s" if args.paced else "closed loop"
    print(f"\nmedian [range] over {args.rounds} rounds, {mode}, {args.games} games:")
    print("| system | actions/s | p99 ms | server CPU per action | PostgreSQL CPU per action |")
    print("| --- | --- | --- | --- | --- |")
    for s in systems:
        w = s.windows
        pg = spread([x.postgres_us for x in w]) + " µs" if s.uses_postgres else "-"
        p99 = spread([x.p99 * 1e3 for x in w], ".1f")
        print(
            f"| {s.label} | {spread([x.rate for x in w])} | {p99}"
            f" | {spread([x.server_us for x in w])} µs | {pg} |"
        )
    by_name = {s.name: s for s in systems}
    fairway = by_name.get("fairway")
    if fairway is None:
        return
    for other in (by_name.get("bgio-memory"), by_name.get("bgio-postgres")):
        if other is None:
            continue
        rates = [a.rate / b.rate for a, b in zip(fairway.windows, other.windows, strict=True)]
        cpus = [
            (a.server_us + a.postgres_us) / (b.server_us + b.postgres_us)
            for a, b in zip(fairway.windows, other.windows, strict=True)
        ]
        print(
            f"Fairway / {other.label}: actions/s {spread(rates, '.2f')}x;"
            f" server + PostgreSQL CPU per action {spread(cpus, '.2f')}x (same-round ratios)"
        )


async def run(args: argparse.Namespace) -> None:
    names = [n for n in args.systems.split(",") if n]
    unknown = set(names) - set(SYSTEMS)
    if unknown:
        raise SystemExit(f"unknown systems {sorted(unknown)}; choose from {SYSTEMS}")
    versions = ensure_installed() if any(n.startswith("bgio") for n in names) else ""
    with psycopg.connect(args.url) as conn:
        row = conn.execute("SHOW server_version").fetchone()
    print(
        f"side by side: {os.cpu_count()} CPUs ({cpu_model()}), load average"
        f" {' '.join(f'{x:.2f}' for x in os.getloadavg())}; Python {sys.version.split()[0]},"
        f" PostgreSQL {row[0] if row else '?'}; {versions}"
    )
    print(
        f"{args.rounds} rounds of {', '.join(names)} in turn; each window {args.seconds:.0f} s"
        f" after {args.warmup:.0f} s of warm-up, {args.games} Hang Ten games at once,"
        f" {args.seats} seats, scripted bots, fresh connections per window"
    )
    databases: list[str] = []
    systems: list[System] = []
    log = Path(tempfile.mkdtemp(prefix="fairway-sbs-")) / "bgio-stderr.log"
    try:
        for name in names:
            systems.append(await start(name, args, databases, log))
        for round_no in range(1, args.rounds + 1):
            for system in systems:
                w = await one_window(system, args)
                system.windows.append(w)
                pg = f", PostgreSQL {w.postgres_us:,.0f} µs" if system.uses_postgres else ""
                print(
                    f"round {round_no} {system.name}: {w.rate:,.0f} actions/s, p99"
                    f" {w.p99 * 1e3:.1f} ms, server {w.server_us:,.0f} µs{pg} per action;"
                    f" errors {w.errors}{w.why}; other work {w.other:.0%} of the machine"
                    f"{'  WARNING: skewed' if w.other > 0.10 else ''}"
                )
        report(systems, args)
        print(f"load average at the end: {' '.join(f'{x:.2f}' for x in os.getloadavg())}")
    finally:
        for system in systems:
            (stop_server if system.name == "fairway" else stop_bgio)(system.server)
        for url in databases:
            drop_database(args.url, url)
        if log.exists() and log.stat().st_size:
            lines = log.read_text(errors="replace").splitlines()
            print(f"boardgame.io's stderr ({len(lines)} lines, last 5): {lines[-5:]}")


def cpu_model() -> str:
    with open("/proc/cpuinfo") as f:
        for line in f:
            if line.startswith("model name"):
                return line.split(":", 1)[1].strip()
    return "?"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    default = os.environ.get("DATABASE_URL", "postgresql://postgres@127.0.0.1:5432/test")
    parser.add_argument("--url", default=default, help="any database on the server to use")
    parser.add_argument("--systems", default=",".join(SYSTEMS))
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--seconds", type=float, default=20.0, help="measured window")
    parser.add_argument("--warmup", type=float, default=5.0)
    parser.add_argument("--games", type=int, default=100, help="games (connections) at once")
    parser.add_argument("--seats", type=int, default=4)
    parser.add_argument("--workers", type=int, default=2, help="fairway serve --workers")
    parser.add_argument(
        "--pool-size",
        type=int,
        default=10,
        help="PostgreSQL connections per Fairway worker and for boardgame.io's process",
    )
    parser.add_argument(
        "--paced",
        type=float,
        default=0.0,
        help="actions/s in all, open loop (latency from each scheduled send); 0: closed loop",
    )
    parser.add_argument(
        "--quiet-wait", type=float, default=0.0, help="wait up to S s for a quiet machine"
    )
    parser.add_argument("--verbose", action="store_true", help="show Fairway's stdout")
    # what benchmarks/load's Fairway server and bots read, fixed here
    parser.set_defaults(
        variant="hang-ten",
        bot="scripted",
        hands=None,
        turn_limit=None,
        group_commit="on",
        projector="embedded",
        server_path=None,
    )
    asyncio.run(run(parser.parse_args()))


if __name__ == "__main__":
    main()
