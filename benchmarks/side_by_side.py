"""Side by side with boardgame.io (issue 19): Fairway and boardgame.io 0.50.2 played by the
same bots over HTTP on this machine, rounds interleaved; prints figures (docs/BENCHMARKS.md,
"Side by side with boardgame.io (issue 19)"). No test runs it and nothing asserts a duration.

    .venv/bin/python benchmarks/side_by_side.py [--rounds 3] [--seconds 20] [--warmup 5]
        [--games 100] [--workers 2] [--modes closed,200,800] [--paced RATE] [--after 10]
        [--systems fairway,bgio-memory,bgio-postgres]
        [--url postgresql://postgres@127.0.0.1:5432/test] [--quiet-wait 0]

The systems, all started once and kept running for the whole run:

- fairway: `fairway serve --workers N` on a throw-away PostgreSQL database, exactly as
  benchmarks/api_load.py starts it (rate limits off, log level warning, the connections
  spread evenly over the workers). An action is answered after its events are committed,
  chained and signed, with the seat's new view and legal actions. `--projector embedded`
  (the default): each worker keeps the read models in its memory; `--projector redis`: the
  read models in Redis, kept by one projector process for the deployment (as
  benchmarks/api_load.py --projector redis starts it), whose CPU and the Redis server's are
  counted with the server's.
- bgio-memory: boardgame.io's own Server (benchmarks/bgio/server.js) with its in-memory
  storage; bgio-postgres: the same on a throw-away database through bgio-postgres, the
  community PostgreSQL adapter. Its game (benchmarks/bgio/game.js) does Hang Ten's work per
  move: a 2x5 layout per player, draw and replace, a playerView hiding the face-down cards and
  the stock. A move goes through boardgame.io's Master (its move processing, storage and
  playerView) and is answered, after the write, with the seat's view and legal actions.
  `npm ci` runs in benchmarks/bgio/ first when its node_modules is missing.

Each round runs every system in turn (A, B, C, A, B, C, ...) in each mode: fresh connections,
`--games` games at once played by benchmarks/load's scripted Hang Ten bots (one keep-alive
connection and one action in flight per game), `--warmup` s, then a window of `--seconds` s.
The modes (`--modes`, default `closed`): `closed`, the closed loop (each game sends its next
action as soon as the last is answered), or a rate, RATE actions/s in all, open loop, latency
counted from each scheduled send time (`--paced RATE` is `--modes RATE`). Per window:
actions/s, p99 latency, the server's CPU per action (its whole process tree, utime+stime from
/proc) and PostgreSQL's (this database's backends plus the WAL writer, checkpointer and
background writer), as benchmarks/load/processes.py counts them. Per system: the median of
the rounds and the range; then Fairway's ratios to each boardgame.io system (of the medians,
with the range of the same-round ratios). With the closed loop and a rate among the modes, each
system's paced premium too: its CPU per action paced over its CPU per action in the same
round's closed loop, which shows how much of a lone action's cost is the machine's (every
system pays a wake-up per request that a busy loop shares) and how much the system's own.

`--after S`: each system is metered on for S s after its window, with no load, and what it
spent then (the work it put off past the window, and its idle cost) is shared over every action
it answered in the phase, warm-up included, and added to its CPU per action. A system that
defers work (Fairway's in-memory read models catch up once the feed has been quiet for a
second) otherwise spends it in the next system's window, uncounted.

The CPU model and the load average are printed: on a shared machine, only ratios measured in
one run compare.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import secrets
import sys
import tempfile
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
from benchmarks.load.bots import open_table  # noqa: E402
from benchmarks.load.phases import action_phase  # noqa: E402
from benchmarks.load.processes import CpuMeter, postgres_pids, wait_quiet  # noqa: E402
from benchmarks.load.server import (  # noqa: E402
    free_port,
    start_projector,
    start_server,
    stop_projector,
    stop_server,
    wait_ready,
    worker_pids,
)
from benchmarks.load.sides import (  # noqa: E402
    CLOSED,
    System,
    Window,
    mode_name,
    report,
    report_premiums,
)
from benchmarks.load.stats import percentile  # noqa: E402
from events.migrate import migrate  # noqa: E402

SYSTEMS = ("fairway", "bgio-memory", "bgio-postgres")


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
        projector = start_projector(args, url)
        others = [] if projector is None else [projector.pid, *redis_server_pids()]
        meter = CpuMeter(server.pid, postgres_pids(url), lambda: others)
        label = f"Fairway, PostgreSQL, {args.workers} workers"
        if projector is not None:
            label += ", a Redis projector (its CPU and Redis's in the server's)"
        workers = worker_pids(server, args.workers)
        return System(name, label, port, server, meter, open_table, True, workers, projector)
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


async def one_window(system: System, args: argparse.Namespace, mode: float) -> Window:
    if args.quiet_wait:
        await wait_quiet(args.quiet_wait)
    clients = await system.clients(args.games)
    try:
        stats, cpu = await action_phase(
            args, clients, system.meter, mode, system.opener, all_opened=True
        )
    finally:
        for client in clients:
            await client.close()
    actions = max(1, stats.actions)
    after_us = 0.0
    if args.after > 0:
        await asyncio.sleep(args.after)
        tail = system.meter.window(cpu.end, system.meter.snapshot())
        after_us = (tail.server + tail.postgres) / max(1, stats.answered) * 1e6
    return Window(
        after_us=after_us,
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
    modes = parse_modes(args.modes if args.paced == 0 else str(args.paced))
    print(
        f"{args.rounds} rounds of {', '.join(names)} in turn, in each of"
        f" {', '.join(mode_name(m) for m in modes)}; each window {args.seconds:.0f} s"
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
            for mode in modes:
                for system in systems:
                    w = await one_window(system, args, mode)
                    system.windows.setdefault(mode, []).append(w)
                    pg = f", PostgreSQL {w.postgres_us:,.0f} µs" if system.uses_postgres else ""
                    pg += f", after it {w.after_us:,.0f} µs" if args.after else ""
                    print(
                        f"round {round_no}, {mode_name(mode)}, {system.name}: {w.rate:,.0f}"
                        f" actions/s, p99 {w.p99 * 1e3:.1f} ms, server {w.server_us:,.0f} µs{pg}"
                        f" per action; errors {w.errors}{w.why}; other work {w.other:.0%} of the"
                        f" machine{'  WARNING: skewed' if w.other > 0.10 else ''}"
                    )
        for mode in modes:
            report(systems, args, mode)
        report_premiums(systems, modes)
        print(f"load average at the end: {' '.join(f'{x:.2f}' for x in os.getloadavg())}")
    finally:
        for system in systems:
            stop_projector(system.projector)
            (stop_server if system.name == "fairway" else stop_bgio)(system.server)
        for url in databases:
            drop_database(args.url, url)
        if log.exists() and log.stat().st_size:
            lines = log.read_text(errors="replace").splitlines()
            print(f"boardgame.io's stderr ({len(lines)} lines, last 5): {lines[-5:]}")


def redis_server_pids() -> list[int]:
    """The local Redis server's process (the projector's store), by its name."""
    pids = []
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                if (entry / "comm").read_text().strip() == "redis-server":
                    pids.append(int(entry.name))
            except OSError:
                continue
    return pids


def parse_modes(text: str) -> list[float]:
    """`closed,200,800` -> [0.0, 200.0, 800.0]: the closed loop is 0, a rate its actions/s."""
    modes: list[float] = []
    for part in (p.strip() for p in text.split(",") if p.strip()):
        mode = CLOSED if part == "closed" else float(part)
        if mode < 0 or mode in modes:
            raise SystemExit(f"--modes: {part!r} is negative or given twice")
        modes.append(mode)
    if not modes:
        raise SystemExit("--modes: name at least one mode (closed, or a rate)")
    return modes


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
        help="actions/s in all, open loop (latency from each scheduled send); 0: --modes",
    )
    parser.add_argument(
        "--modes",
        default="closed",
        help="comma-separated: closed (the closed loop) and rates (actions/s, open loop)",
    )
    parser.add_argument(
        "--projector",
        choices=["embedded", "redis"],
        default="embedded",
        help="Fairway's read models: in each worker's memory, or in Redis by one projector",
    )
    parser.add_argument("--redis-url", default="redis://127.0.0.1:6379/14")
    parser.add_argument(
        "--after",
        type=float,
        default=10.0,
        help="meter each system S s more after its window (work it put off); 0: not",
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
        server_path=None,
    )
    args = parser.parse_args()
    args.redis_prefix = f"sbs{secrets.token_hex(4)}"
    asyncio.run(run(args))


if __name__ == "__main__":
    main()
