"""A 200-player, 50-table tournament round played by bots through the real service: how soon
after the round's last action the round is closed and its standings published, and how
GET /tournaments/{id}/standings answers 500 readers at once.

Everything goes through a real server (`fairway serve`, a subprocess, on a throw-away
PostgreSQL database and its own Redis key space, projections inline): the organiser creates
the tournament and registers the players over HTTP, starts the round (50 games created,
seated and dealt), and greedy bots play every table with their players' tokens, 50 tables
at once. The round keeper closes the round when its last game ends; the projector
publishes the standings into Redis. Then:

- closed: from the answer to the round's last action to the first GET /tournaments/{id}
  that shows the round closed (polled every 5 ms);
- published: from the same instant to the first GET standings that counts it closed;
- readers: N concurrent clients GET the standings in a loop, latency percentiles and
  requests per second, beside the same crowd on GET /variants/golf (an answer from memory:
  what the client and the machine cost alone), measured in the same run.

    .venv/bin/python benchmarks/tournament_bench.py [--players 200] [--hands 2]
        [--readers 500] [--requests 20000] [--postgres URL] [--redis URL]
"""

from __future__ import annotations

import argparse
import asyncio
import os
import random
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import httpx
import msgspec

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from benchmarks.load.client import RawClient  # noqa: E402
from benchmarks.load.stats import percentile  # noqa: E402
from domain.variants import bot, decider_for  # noqa: E402
from events.migrate import migrate  # noqa: E402
from tests.api.server import free_port  # noqa: E402
from tests.support.redis_keys import forget  # noqa: E402
from tests.support.services import throwaway_database  # noqa: E402
from tests.support.tournaments import decode_view  # noqa: E402


class Bots:
    """Greedy bots playing the round's tables with their players' tokens, a keep-alive
    connection per table (the raw client of benchmarks/load/client.py: httpx costs more CPU a
    request than the server); records when the last action was answered."""

    def __init__(self, port: int, tokens: dict[str, str]) -> None:
        self.port = port
        self.tokens = tokens
        self.actions = 0
        self.last_answer = 0.0

    async def play(self, game_id: str, seed: int) -> None:
        rng = random.Random(seed)
        client = RawClient(self.port)

        async def get(path: str, token: str | None = None) -> Any:
            status, body = await client.call("GET", path, token=token)
            assert status == 200, body
            return msgspec.json.decode(body)

        summary = await get(f"/games/{game_id}")
        names = [seat["name"] for seat in summary["seats"]]
        decider, greedy = decider_for(summary["variant"]), bot("greedy", summary["variant"])
        try:
            while True:
                status = (await get(f"/games/{game_id}/me", self.tokens[names[0]]))["status"]
                if status["phase"] == "game_over":
                    return
                token = self.tokens[names[rng.choice(status["to_act"])]]
                view, legal = decode_view(decider, await get(f"/games/{game_id}/me", token))
                action = decider.pick(greedy.choose(view, legal, rng), rng)
                answer, body = await client.call(
                    "POST", f"/games/{game_id}/actions", msgspec.json.encode(action), token
                )
                assert answer == 200, body
                self.actions += 1
                self.last_answer = time.perf_counter()
        finally:
            await client.close()


async def readers(port: int, path: str, clients: int, requests: int) -> tuple[list[float], float]:
    """`clients` keep-alive connections GET `path` in a loop, `requests` GETs in all."""
    connections = [RawClient(port) for _ in range(clients)]
    for connection in connections:
        await connection.connect()
    latencies: list[float] = []
    left = [requests]

    async def one(connection: RawClient) -> None:
        while left[0] > 0:
            left[0] -= 1
            sent = time.perf_counter()
            status, body = await connection.call("GET", path)
            latencies.append(time.perf_counter() - sent)
            assert status == 200, body

    began = time.perf_counter()
    await asyncio.gather(*(one(connection) for connection in connections))
    took = time.perf_counter() - began
    for connection in connections:
        await connection.close()
    return sorted(latencies), took


async def until(client: httpx.AsyncClient, path: str, holds: Any) -> float:
    while True:
        response = await client.get(path)
        if response.status_code == 200 and holds(response.json()):
            return time.perf_counter()
        await asyncio.sleep(0.005)


async def run(base: str, port: int, args: argparse.Namespace) -> None:
    limits = httpx.Limits(max_connections=100, max_keepalive_connections=100)
    async with httpx.AsyncClient(base_url=base, timeout=60, limits=limits) as client:
        body = {
            "name": "Bench open",
            "variant": "golf",
            "table_size": 4,
            "rounds": 1,
            "duplicate": True,
            "options": {"hands": args.hands},
        }
        created = (await client.post("/tournaments", json=body)).json()
        tid, organiser = created["tournament_id"], created["organiser_token"]
        auth = {"Authorization": f"Bearer {organiser}"}
        tokens = {}
        for i in range(args.players):
            name = f"P{i:03}"
            added = await client.post(
                f"/tournaments/{tid}/players", json={"name": name}, headers=auth
            )
            assert added.status_code == 201, added.text
            tokens[name] = added.json()["token"]
        began = time.perf_counter()
        started = await client.post(f"/tournaments/{tid}/rounds", headers=auth)
        assert started.status_code == 201, started.text
        tables = started.json()["tables"]
        print(
            f"round started: {len(tables)} tables of 4 created, seated and dealt in "
            f"{(time.perf_counter() - began) * 1000:.0f} ms"
        )
        bots = Bots(port, tokens)
        began = time.perf_counter()
        await asyncio.gather(*(bots.play(t["game_id"], i) for i, t in enumerate(tables)))
        played = bots.last_answer - began
        print(
            f"played: {bots.actions:,} actions in {played:.1f} s "
            f"({bots.actions / played:,.0f} actions/s, {len(tables)} tables at once)"
        )
        last = bots.last_answer
        closed_at, published_at = await asyncio.gather(
            until(client, f"/tournaments/{tid}", lambda b: b["played"][0]["state"] == "closed"),
            until(client, f"/tournaments/{tid}/standings", lambda b: b["rounds_closed"] >= 1),
        )
        print(f"round closed {(closed_at - last) * 1000:.0f} ms after the last action's answer")
        print(f"standings published {(published_at - last) * 1000:.0f} ms after it")
        rows = (await client.get(f"/tournaments/{tid}/standings")).json()["rows"]
        assert len(rows) == args.players
    for what in ("/variants/golf", f"/tournaments/{tid}/standings"):
        latencies, took = await readers(port, what, args.readers, args.requests)
        ms = [x * 1000 for x in latencies]
        print(
            f"GET {what}: {args.readers} readers, {len(ms):,} GETs in {took:.1f} s: "
            f"{len(ms) / took:,.0f} req/s; p50 {percentile(ms, 50):.1f} ms, "
            f"p99 {percentile(ms, 99):.1f} ms, max {ms[-1]:.1f} ms"
        )


async def main(args: argparse.Namespace) -> None:
    with (
        throwaway_database(args.postgres, prefix="fairway_bench") as url,
        tempfile.TemporaryFile() as log,
    ):
        migrate(url)
        prefix = f"tbench{os.getpid()}"
        port = free_port()
        env = os.environ | {
            "DATABASE_URL": url,
            "REDIS_URL": args.redis,
            "FAIRWAY_REDIS_PREFIX": prefix,
            "FAIRWAY_PROJECTOR_INLINE": "1",
            "FAIRWAY_DATA_DIR": tempfile.mkdtemp(prefix="fairway-bench-"),
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
        try:
            deadline = time.monotonic() + 60
            while True:
                try:
                    if httpx.get(base + "/health", timeout=2).status_code == 200:
                        break
                except httpx.TransportError:
                    pass
                assert time.monotonic() < deadline, "the server did not start"
                time.sleep(0.1)
            await run(base, port, args)
            log.seek(0)
            warnings = [line for line in log.read().splitlines() if b'"warning"' in line]
            print(f"server warnings: {len(warnings)}")
            for line in warnings[:3]:
                print("  " + line.decode(errors="replace")[:300])
        finally:
            server.terminate()
            server.wait(timeout=30)
            await forget(args.redis, prefix)


if __name__ == "__main__":
    parser = argparse.ArgumentParser()
    parser.add_argument("--players", type=int, default=200)
    parser.add_argument("--hands", type=int, default=2)
    parser.add_argument("--readers", type=int, default=500)
    parser.add_argument("--requests", type=int, default=20_000)
    parser.add_argument("--postgres", default="postgresql://postgres@127.0.0.1:5432/postgres")
    parser.add_argument("--redis", default="redis://127.0.0.1:6379/10")
    asyncio.run(main(parser.parse_args()))
