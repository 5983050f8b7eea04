"""Standings of a big tournament: how soon they are published after a round's last action,
and how fast GET /tournaments/{id}/standings answers many readers at once.

A 200-player tournament, 50 tables of 4 (real bot games of Golf), its events appended to a
throw-away PostgreSQL database as the tournament service would: each round's games a piece
at a time, then, held back, its last game's end and `round.closed`. A real server
(`fairway serve`, a subprocess: the readers do not share its interpreter) runs the
projections inline into Redis. Then:

- publish: from the append of a round's last `game.ended` + `round.closed` to the first
  GET standings that counts the round closed (polled every 5 ms), once per round;
- readers: N concurrent clients GET the live standings (JSON) in a loop; latency
  percentiles and requests per second; beside it the same crowd on GET /variants/golf (an
  answer from memory), which tells what the client and the machine cost alone.

    .venv/bin/python benchmarks/standings_bench.py [--players 200] [--rounds 3]
        [--readers 500] [--requests 20000] [--postgres URL] [--redis URL]
"""

from __future__ import annotations

import argparse
import asyncio
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import httpx

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from events.migrate import migrate  # noqa: E402
from events.schema.common import GameEnded  # noqa: E402
from events.schema.tournament import RoundClosed  # noqa: E402
from events.store.factory import open_store  # noqa: E402
from tests.api.server import free_port  # noqa: E402
from tests.support.redis_keys import forget  # noqa: E402
from tests.support.services import throwaway_database  # noqa: E402
from tests.support.tournament_history import Entry, append_history, tournament_history  # noqa: E402


def percentile(ordered: list[float], p: float) -> float:
    return ordered[min(len(ordered) - 1, int(len(ordered) * p / 100))]


def rounds_of(history: list[Entry]) -> list[tuple[list[Entry], list[Entry]]]:
    """Each round as (everything up to its last game's end, that end and `round.closed`);
    the history's tail (tournament.ended) goes with the last round's second part."""
    parts: list[tuple[list[Entry], list[Entry]]] = []
    start = 0
    for i, (_, event) in enumerate(history):
        if isinstance(event, RoundClosed):
            last_end = max(j for j in range(start, i) if isinstance(history[j][1], GameEnded))
            # the last game's final piece: from its previous event of another stream on
            first = last_end
            while first > start and history[first - 1][0] == history[last_end][0]:
                first -= 1
            parts.append((history[start:first], history[first : i + 1]))
            start = i + 1
    if start < len(history):
        held, tail = parts[-1]
        parts[-1] = (held, tail + history[start:])
    return parts


async def wait_closed(client: httpx.AsyncClient, path: str, closed: int) -> float:
    started = time.perf_counter()
    while True:
        response = await client.get(path)
        if response.status_code == 200 and response.json()["rounds_closed"] >= closed:
            return time.perf_counter() - started
        await asyncio.sleep(0.005)


async def readers(base: str, path: str, clients: int, requests: int) -> tuple[list[float], float]:
    latencies: list[float] = []
    left = [requests]
    limits = httpx.Limits(max_connections=clients, max_keepalive_connections=clients)
    async with httpx.AsyncClient(base_url=base, limits=limits, timeout=60) as client:

        async def one() -> None:
            while left[0] > 0:
                left[0] -= 1
                started = time.perf_counter()
                response = await client.get(path)
                latencies.append(time.perf_counter() - started)
                assert response.status_code == 200, response.text

        started = time.perf_counter()
        await asyncio.gather(*(one() for _ in range(clients)))
        return sorted(latencies), time.perf_counter() - started


async def main(args: argparse.Namespace) -> None:
    print(f"building the history: {args.players} players, tables of 4, {args.rounds} rounds")
    history = tournament_history(
        1, tournament="bench", variant="golf", players=args.players, rounds=args.rounds,
        finish=True, size=4, churn=False,
    )  # fmt: skip
    parts = rounds_of(history)
    print(f"{len(history):,} events; {len(parts)} rounds")
    with (
        throwaway_database(args.postgres, prefix="fairway_bench") as url,
        tempfile.TemporaryFile() as log,  # the server's log: its warnings are counted
    ):
        migrate(url)
        store = await open_store(url, "unused")
        prefix = f"stbench{os.getpid()}"
        port = free_port()
        env = os.environ | {
            "DATABASE_URL": url,
            "REDIS_URL": args.redis,
            "FAIRWAY_REDIS_PREFIX": prefix,
            "FAIRWAY_PROJECTOR_INLINE": "1",
            "FAIRWAY_LOG_LEVEL": "warning",
            "FAIRWAY_RATE_LIMIT_PER_SECOND": "1000000",
            "FAIRWAY_RATE_LIMIT_BURST": "1000000",
        }
        server = subprocess.Popen(
            [str(ROOT / ".venv/bin/fairway"), "serve", "--host", "127.0.0.1", "--port", str(port)],
            env=env,
            stdout=subprocess.DEVNULL,
            stderr=log,
        )
        base = f"http://127.0.0.1:{port}"
        path = "/tournaments/bench/standings"
        versions: dict[str, int] = {}
        try:
            async with httpx.AsyncClient(base_url=base, timeout=30) as client:
                deadline = time.monotonic() + 60
                while True:
                    try:
                        if (await client.get("/health")).status_code == 200:
                            break
                    except httpx.TransportError:
                        pass
                    assert time.monotonic() < deadline, "the server did not start"
                    await asyncio.sleep(0.1)
                publish = []
                for number, (held, last) in enumerate(parts, start=1):
                    await append_history(store, held, versions)
                    await wait_closed(client, path, number - 1)  # caught up but for the end
                    started = time.perf_counter()
                    await append_history(store, last, versions)
                    await wait_closed(client, path, number)
                    publish.append(time.perf_counter() - started)
                    print(f"round {number}: standings published {publish[-1] * 1000:.0f} ms "
                          "after its last game's end")  # fmt: skip
                answer = await client.get(path)
                rows = len(answer.json()["rows"])
                print(f"standings: {rows} rows, {len(answer.content):,} bytes of JSON")
            # The same crowd on a static answer first: the machine's and the client's share.
            for what in ("/variants/golf", path):
                latencies, took = await readers(base, what, args.readers, args.requests)
                ms = [x * 1000 for x in latencies]
                print(
                    f"GET {what}: {args.readers} readers, {len(ms):,} GETs in {took:.1f} s: "
                    f"{len(ms) / took:,.0f} req/s; p50 {percentile(ms, 50):.1f} ms, "
                    f"p90 {percentile(ms, 90):.1f} ms, p99 {percentile(ms, 99):.1f} ms, "
                    f"max {ms[-1]:.1f} ms"
                )
            log.seek(0)
            warnings = [line for line in log.read().splitlines() if b'"warning"' in line]
            print(f"server warnings: {len(warnings)}")
        finally:
            server.terminate()
            server.wait(timeout=30)
            await store.close()
            await forget(args.redis, prefix)


if __name__ == "__main__":
    parser = argparse.ArgumentParser()
    parser.add_argument("--players", type=int, default=200)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--readers", type=int, default=500)
    parser.add_argument("--requests", type=int, default=20_000)
    parser.add_argument("--postgres", default="postgresql://postgres@127.0.0.1:5432/postgres")
    parser.add_argument("--redis", default="redis://127.0.0.1:6379/10")
    asyncio.run(main(parser.parse_args()))
