"""Live streams under load: many SSE subscribers on one instance while bots play; prints
figures (docs/BENCHMARKS.md, "Live event streams"). No test runs it; nothing asserts a time.

    .venv/bin/python benchmarks/sse_bench.py [--subscribers 1000] [--games 20] [--rate 20]
        [--seconds 20] [--baseline 8] [--url postgresql://postgres@127.0.0.1:5432/test]

It creates a throw-away database next to the one in --url, migrates it, starts `fairway
serve` (one worker: one instance) on a free loopback port and opens `--games` two-seat Golf
games. Then two windows, the same bots playing in both at `--rate` actions/s in all (each
game at fixed times: GET /me, then POST /actions):

- baseline: no subscriber; the server's CPU per action.
- streams: `--subscribers` SSE subscribers spread evenly over the games, alternately a
  spectator and a seat, all connected before the window opens (each first receives the
  game's history, outside the window).

Latency of a delivery: the time the subscriber received the event minus the time the
acting bot received the answer of the action that appended it (after the commit), both on
this process's monotonic clock; negative when the stream beat the answer. CPU: utime+stime
of the server process (/proc/<pid>/stat) over each window. CPU per delivered event is the
streams window's server CPU less what its actions cost at the baseline's rate, over the
events delivered; its ratio to the CPU per action is printed beside it (same run). This
client shares the machine; its own CPU is printed.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import random
import resource
import secrets
import signal
import socket
import statistics
import subprocess
import sys
import time
from pathlib import Path

import httpx
import psycopg
from psycopg import conninfo

sys.path.insert(0, str(Path(__file__).resolve().parent))
sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from sse_clients import HOST, Answers, Receipts, Table, open_table, play, subscribe

from events.migrate import migrate

ROOT = Path(__file__).resolve().parent.parent
TICK = os.sysconf("SC_CLK_TCK")


def cpu_of(pid: int) -> float:
    with open(f"/proc/{pid}/stat", "rb") as f:
        fields = f.read().rsplit(b")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / TICK


def self_cpu() -> float:
    usage = resource.getrusage(resource.RUSAGE_SELF)
    return usage.ru_utime + usage.ru_stime


def cpu_model() -> str:
    out = subprocess.run(["lscpu"], capture_output=True, text=True, check=False).stdout
    model = next(
        (
            line.split(":", 1)[1].strip()
            for line in out.splitlines()
            if line.startswith("Model name")
        ),
        "?",
    )
    return f"{model}, {os.cpu_count()} CPUs"


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind((HOST, 0))
        return int(sock.getsockname()[1])


def start_server(url: str, port: int) -> subprocess.Popen[bytes]:
    env = os.environ | {
        "DATABASE_URL": url,
        "FAIRWAY_LOG_LEVEL": "warning",
        "FAIRWAY_RATE_LIMIT_PER_SECOND": "1e9",
        "FAIRWAY_RATE_LIMIT_BURST": "1000000000",
        # Every subscriber comes from this one address: the caps per client would refuse
        # all but the first 64 streams (and close connections idle at the time).
        "FAIRWAY_MAX_CONNECTIONS_PER_CLIENT": "100000",
        "FAIRWAY_MAX_STREAMS_PER_CLIENT": "100000",
        "PYTHONPATH": str(ROOT),
    }
    command = [
        sys.executable,
        "-m",
        "service.cli",
        "serve",
        "--host",
        HOST,
        "--port",
        str(port),
    ]
    return subprocess.Popen(
        command, cwd=ROOT, env=env, start_new_session=True, stdout=subprocess.DEVNULL
    )


async def wait_ready(base: str, server: subprocess.Popen[bytes]) -> None:
    deadline = time.monotonic() + 60
    async with httpx.AsyncClient(base_url=base) as http:
        while time.monotonic() < deadline:
            if server.poll() is not None:
                raise RuntimeError(f"fairway serve exited with {server.returncode}")
            try:
                if (await http.get("/ready")).status_code == 200:
                    return
            except httpx.TransportError:
                pass
            await asyncio.sleep(0.2)
    raise RuntimeError("fairway serve did not become ready in 60 s")


async def window(
    http: httpx.AsyncClient, tables: list[Table], args: argparse.Namespace, seconds: float, pid: int
) -> tuple[Answers, float, float, float]:
    """Bots play for `seconds`; returns their answers, the server's CPU, this client's CPU and
    the wall time."""
    answers, stop = Answers(), asyncio.Event()
    interval = len(tables) / args.rate
    rng = random.Random(1)
    bots = [asyncio.create_task(play(http, t, answers, interval, stop, rng)) for t in tables]
    cpu, mine, wall = cpu_of(pid), self_cpu(), time.monotonic()
    await asyncio.sleep(seconds)
    cpu, mine, wall = cpu_of(pid) - cpu, self_cpu() - mine, time.monotonic() - wall
    stop.set()
    await asyncio.gather(*bots)
    return answers, cpu, mine, wall


def percentile(values: list[float], p: float) -> float:
    return values[min(len(values) - 1, int(p / 100 * len(values)))]


async def measure(args: argparse.Namespace, base: str, port: int, pid: int) -> None:
    limits = httpx.Limits(max_connections=args.games, max_keepalive_connections=args.games)
    async with httpx.AsyncClient(base_url=base, limits=limits, timeout=30) as http:
        options = {"hands": 100}
        tables = list(
            await asyncio.gather(*(open_table(http, 2, options) for _ in range(args.games)))
        )
        await window(http, tables, args, 2.0, pid)  # warm the caches
        base_answers, base_cpu, _, base_wall = await window(http, tables, args, args.baseline, pid)

        receipts = Receipts()
        subscribers, ready = [], []
        for n in range(args.subscribers):
            table = tables[n % len(tables)]
            viewer = None if n % 2 == 0 else table.tokens[(n // 2) % 2]
            event = asyncio.Event()
            ready.append(event)
            subscribers.append(
                asyncio.create_task(subscribe(port, table.game_id, viewer, receipts, event))
            )
            if n % 100 == 99:
                await asyncio.sleep(0.05)  # do not overflow the listen backlog
        await asyncio.wait_for(asyncio.gather(*(e.wait() for e in ready)), 120)
        await asyncio.sleep(1.0)  # the history each one is sent first
        receipts.measuring = True
        answers, cpu, mine, wall = await window(http, tables, args, args.seconds, pid)
        await asyncio.sleep(1.0)  # the last deliveries
        receipts.measuring = False
        open_streams = next(
            (
                line.split()[-1]
                for line in (await http.get("/metrics")).text.splitlines()
                if line.startswith("fairway_sse_streams_open ")
            ),
            "?",
        )
        for task in subscribers:
            task.cancel()
        await asyncio.gather(*subscribers, return_exceptions=True)

    latencies = sorted(
        seen - answers.at[(game, version)]
        for game, version, seen in receipts.seen
        if (game, version) in answers.at
    )
    if receipts.failures:
        print(f"first failed answer: {receipts.failure!r}")
    per_action = base_cpu / max(1, base_answers.actions)
    delivered = len(latencies)
    streaming_cpu = cpu - per_action * answers.actions
    per_event = streaming_cpu / max(1, delivered)
    print(f"CPU: {cpu_model()}")
    print(
        f"subscribers: {args.subscribers} over {args.games} games (open streams per "
        f"/metrics: {open_streams}), failures {receipts.failures}"
    )
    print(
        f"baseline ({base_wall:.1f} s, no subscriber): {base_answers.actions} actions, "
        f"server CPU {base_cpu:.2f} s = {per_action * 1e3:.2f} ms per action"
    )
    print(
        f"streams ({wall:.1f} s): {answers.actions} actions ({answers.errors} refused), "
        f"{delivered} deliveries timed ({delivered / wall:.0f}/s), heartbeats {receipts.heartbeats}"
    )
    if latencies:
        ms = [x * 1e3 for x in latencies]
        print(
            f"latency, answer to receipt: p50 {percentile(ms, 50):.1f} ms, "
            f"p95 {percentile(ms, 95):.1f} ms, p99 {percentile(ms, 99):.1f} ms, "
            f"max {ms[-1]:.1f} ms, mean {statistics.fmean(ms):.1f} ms "
            f"(negative: the stream beat the answer; min {ms[0]:.1f} ms)"
        )
    first: dict[tuple[str, int], float] = {}
    last: dict[tuple[str, int], float] = {}
    for game, version, seen in receipts.seen:
        key = (game, version)
        first[key] = min(first.get(key, seen), seen)
        last[key] = max(last.get(key, seen), seen)
    timed = [key for key in first if key in answers.at]
    if timed:
        to_first = sorted((first[k] - answers.at[k]) * 1e3 for k in timed)
        spread = sorted((last[k] - first[k]) * 1e3 for k in timed)
        print(
            f"per event: answer to its first receipt p50 {percentile(to_first, 50):.1f} ms, "
            f"p99 {percentile(to_first, 99):.1f} ms; first to last receipt (the fan-out) "
            f"p50 {percentile(spread, 50):.1f} ms, p99 {percentile(spread, 99):.1f} ms"
        )
    print(
        f"server CPU {cpu:.2f} s ({cpu / wall:.0%} of a core), "
        f"of which streaming ~{streaming_cpu:.2f} s: {per_event * 1e6:.0f} us per delivered "
        f"event = {per_event / per_action:.3f} x the CPU of an action"
    )
    print(f"this client: {mine:.2f} s CPU ({mine / wall:.0%} of a core)")


async def run(args: argparse.Namespace) -> None:
    _, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    resource.setrlimit(resource.RLIMIT_NOFILE, (hard, hard))
    name = f"fairway_sse_{secrets.token_hex(4)}"
    with psycopg.connect(args.url, autocommit=True) as conn:
        conn.execute(f'CREATE DATABASE "{name}"'.encode())
    url = conninfo.make_conninfo(args.url, dbname=name)
    server = None
    try:
        migrate(url)
        port = free_port()
        server = start_server(url, port)
        base = f"http://{HOST}:{port}"
        await wait_ready(base, server)
        await measure(args, base, port, server.pid)
    finally:
        if server is not None and server.poll() is None:
            server.send_signal(signal.SIGINT)
            try:
                server.wait(timeout=20)
            except subprocess.TimeoutExpired:
                server.kill()
                server.wait()
        with psycopg.connect(args.url, autocommit=True) as conn:
            conn.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)'.encode())


def main() -> None:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    default = os.environ.get("DATABASE_URL", "postgresql://postgres@127.0.0.1:5432/test")
    parser.add_argument("--url", default=default, help="any database on the server to use")
    parser.add_argument("--subscribers", type=int, default=1000)
    parser.add_argument("--games", type=int, default=20)
    parser.add_argument("--rate", type=float, default=20.0, help="actions per second, in all")
    parser.add_argument("--seconds", type=float, default=20.0, help="the streams window")
    parser.add_argument("--baseline", type=float, default=8.0, help="the window without streams")
    asyncio.run(run(parser.parse_args()))


if __name__ == "__main__":
    main()
