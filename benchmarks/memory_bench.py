"""Memory of one `fairway serve` process under streams of requests (issue 7, item 6).

    .venv/bin/python benchmarks/memory_bench.py [--unknown 50000] [--games 1000] [--actions 30]

Starts the real service (the embedded store in a temporary folder, or PostgreSQL when
DATABASE_URL is set: run `fairway migrate` first) on a free loopback port, and prints its
resident memory (VmRSS) after each phase, with the ratio to its RSS at start measured in
the same run:

1. requests about games that do not exist (seat claims and views on random ids);
2. games opened and left in their lobby;
3. live games: `--games` games of Hang Ten for 4, each played `--actions` actions;
4. finished games: whole two-player Golf games played to the end;
5. phase 1 again, to show the process stays flat.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import platform
import random
import secrets
import socket
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import httpx

ROOT = Path(__file__).resolve().parent.parent


def cpu() -> str:
    for line in Path("/proc/cpuinfo").read_text().splitlines():
        if line.startswith("model name"):
            return line.split(":", 1)[1].strip()
    return platform.processor() or "unknown"


def rss_mb(pid: int) -> float:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) / 1024
    raise RuntimeError("no VmRSS")


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


async def gather_bounded(jobs: list[Any], width: int = 16) -> list[Any]:
    gate = asyncio.Semaphore(width)

    async def one(job: Any) -> Any:
        async with gate:
            return await job

    return await asyncio.gather(*(one(job) for job in jobs))


async def unknown_ids(http: httpx.AsyncClient, count: int) -> None:
    async def probe(n: int) -> None:
        game_id = secrets.token_hex(8)
        if n % 2:
            await http.post(f"/games/{game_id}/seats", json={"name": "nobody"})
        else:
            await http.get(f"/games/{game_id}/view")

    await gather_bounded([probe(n) for n in range(count)])


async def open_game(http: httpx.AsyncClient, variant: str, seats: int, start: bool) -> Any:
    body = {"variant": variant, "seats": seats, "options": {"hands": 1}}
    created = (await http.post("/games", json=body)).json()
    game_id = created["game_id"]
    tokens = []
    if start:
        for seat in range(seats):
            claim = await http.post(f"/games/{game_id}/seats", json={"name": f"bot {seat}"})
            tokens.append(claim.json()["token"])
        auth = {"Authorization": f"Bearer {created['creator_token']}"}
        (await http.post(f"/games/{game_id}/start", headers=auth)).raise_for_status()
    return game_id, tokens


async def play(http: httpx.AsyncClient, game_id: str, tokens: list[str], actions: int) -> int:
    """Up to `actions` actions by the seats whose turn it is; the number taken."""
    rng = random.Random(game_id)
    for taken in range(actions):
        status = (await http.get(f"/games/{game_id}")).json()["status"]
        if status["phase"] == "game_over":
            return taken
        seat = status["to_act"][0]
        auth = {"Authorization": f"Bearer {tokens[seat]}"}
        legal = (await http.get(f"/games/{game_id}/me", headers=auth)).json()["legal_actions"]
        response = await http.post(
            f"/games/{game_id}/actions", json=rng.choice(legal), headers=auth
        )
        response.raise_for_status()
    return actions


async def phases(base: str, pid: int, args: argparse.Namespace) -> None:
    start = rss_mb(pid)

    def report(label: str, began: float) -> None:
        now = rss_mb(pid)
        print(
            f"{label:<58} RSS {now:7.1f} MB  x{now / start:5.2f} of start"
            f"  ({time.perf_counter() - began:5.1f} s)",
            flush=True,
        )

    print(f"{'at start':<58} RSS {start:7.1f} MB  x 1.00 of start", flush=True)
    limits = httpx.Limits(max_connections=32)
    async with httpx.AsyncClient(base_url=base, timeout=60, limits=limits) as http:
        began = time.perf_counter()
        await unknown_ids(http, args.unknown)
        report(f"1. {args.unknown:,} requests on unknown game ids", began)

        began = time.perf_counter()
        await gather_bounded([open_game(http, "golf", 2, False) for _ in range(args.lobbies)])
        report(f"2. {args.lobbies:,} games opened, left in the lobby", began)

        began = time.perf_counter()
        live = await gather_bounded(
            [open_game(http, "hang-ten", 4, True) for _ in range(args.games)]
        )
        taken = await gather_bounded([play(http, g, t, args.actions) for g, t in live])
        report(f"3. {len(live):,} live Hang Ten games, {sum(taken):,} actions", began)

        began = time.perf_counter()
        done = await gather_bounded(
            [open_game(http, "golf", 2, True) for _ in range(args.finished)]
        )
        taken = await gather_bounded([play(http, g, t, 10_000) for g, t in done], width=8)
        report(f"4. {len(done):,} whole Golf games played out ({sum(taken):,} actions)", began)

        began = time.perf_counter()
        await unknown_ids(http, args.unknown)
        report(f"5. {args.unknown:,} more requests on unknown game ids", began)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--unknown", type=int, default=50_000)
    parser.add_argument("--lobbies", type=int, default=20_000)
    parser.add_argument("--games", type=int, default=1_000)
    parser.add_argument("--actions", type=int, default=30)
    parser.add_argument("--finished", type=int, default=300)
    args = parser.parse_args()
    port = free_port()
    with tempfile.TemporaryDirectory() as data_dir:
        env = {
            **os.environ,
            "FAIRWAY_DATA_DIR": data_dir,
            "FAIRWAY_PORT": str(port),
            "FAIRWAY_LOG_LEVEL": "warning",
            "FAIRWAY_LOG_FORMAT": "json",
            "FAIRWAY_RATE_LIMIT_PER_SECOND": "1000000",
            "FAIRWAY_RATE_LIMIT_BURST": "1000000",
        }
        store = "PostgreSQL" if env.get("DATABASE_URL") else "embedded store"
        print(f"CPU: {cpu()}; {os.cpu_count()} cores; {store}; Python {platform.python_version()}")
        server = subprocess.Popen(
            [sys.executable, "-m", "service.cli", "serve", "--port", str(port)],
            cwd=ROOT,
            env=env,
            stdout=subprocess.DEVNULL,
        )
        base = f"http://127.0.0.1:{port}"
        try:
            deadline = time.monotonic() + 30
            while True:
                try:
                    httpx.get(base + "/health", timeout=1).raise_for_status()
                    break
                except httpx.HTTPError:
                    if time.monotonic() > deadline or server.poll() is not None:
                        raise
                    time.sleep(0.1)
            asyncio.run(phases(base, server.pid, args))
        finally:
            server.terminate()
            server.wait(timeout=30)
    return 0


if __name__ == "__main__":
    sys.exit(main())
