"""The clients of benchmarks/sse_bench.py: event-stream subscribers on raw sockets (h11
parses the HTTP) and bots that play through REST, each noting when things happened on one
monotonic clock (same host, same clock as the subscribers)."""

from __future__ import annotations

import asyncio
import contextlib
import random
import time
from dataclasses import dataclass, field
from typing import Any

import h11
import httpx

HOST = "127.0.0.1"


@dataclass
class Receipts:
    """When each subscriber received each event: (game, version, monotonic time)."""

    seen: list[tuple[str, int, float]] = field(default_factory=list)
    measuring: bool = False
    """Only receipts while the window is open are kept."""
    heartbeats: int = 0
    failures: int = 0


async def subscribe(
    port: int, game_id: str, token: str | None, receipts: Receipts, ready: asyncio.Event
) -> None:
    """One subscriber: GET the game's stream, note each message's id as it arrives."""
    reader, writer = await asyncio.open_connection(HOST, port)
    conn = h11.Connection(our_role=h11.CLIENT)
    headers = [("Host", "bench"), ("Accept", "text/event-stream")]
    if token is not None:
        headers.append(("Authorization", f"Bearer {token}"))
    writer.write(
        conn.send(h11.Request(method="GET", target=f"/games/{game_id}/stream", headers=headers))
    )
    writer.write(conn.send(h11.EndOfMessage()))
    pending = b""
    try:
        while True:
            data = await reader.read(65536)
            now = time.monotonic()
            conn.receive_data(data)
            if not data:
                return
            while (event := conn.next_event()) is not h11.NEED_DATA:
                if isinstance(event, h11.Response):
                    if event.status_code != 200:
                        receipts.failures += 1
                        return
                    ready.set()
                elif isinstance(event, h11.Data):
                    pending += bytes(event.data)
                    *messages, pending = pending.split(b"\n\n")
                    for message in messages:
                        note(message, game_id, now, receipts)
                elif isinstance(event, h11.EndOfMessage | h11.ConnectionClosed):
                    return
    finally:
        writer.close()
        with contextlib.suppress(OSError):
            await writer.wait_closed()


def note(message: bytes, game_id: str, now: float, receipts: Receipts) -> None:
    if message.startswith(b":"):
        receipts.heartbeats += 1
    elif message.startswith(b"id: ") and receipts.measuring:
        version = int(message[4 : message.index(b"\n")])
        receipts.seen.append((game_id, version, now))


@dataclass
class Table:
    game_id: str
    creator: str
    tokens: list[str]
    to_act: list[int] = field(default_factory=list)


@dataclass
class Answers:
    """When the acting client received the answer that appended each version."""

    at: dict[tuple[str, int], float] = field(default_factory=dict)
    actions: int = 0
    errors: int = 0


async def open_table(http: httpx.AsyncClient, seats: int, options: dict[str, Any]) -> Table:
    created = (
        await http.post("/games", json={"variant": "golf", "seats": seats, "options": options})
    ).json()
    table = Table(created["game_id"], created["creator_token"], [])
    for seat in range(seats):
        claimed = await http.post(f"/games/{table.game_id}/seats", json={"name": f"bot {seat}"})
        table.tokens.append(claimed.json()["token"])
    auth = {"Authorization": f"Bearer {table.creator}"}
    started = (await http.post(f"/games/{table.game_id}/start", headers=auth)).json()
    table.to_act = list(started["status"]["to_act"])
    return table


async def play(
    http: httpx.AsyncClient,
    table: Table,
    answers: Answers,
    interval: float,
    stop: asyncio.Event,
    rng: random.Random,
) -> None:
    """One action every `interval` seconds (at fixed times), a legal one at random."""
    loop = asyncio.get_running_loop()
    due = loop.time() + rng.random() * interval
    while not stop.is_set():
        await asyncio.sleep(max(0.0, due - loop.time()))
        due += interval
        seat = rng.choice(table.to_act)
        auth = {"Authorization": f"Bearer {table.tokens[seat]}"}
        me = (await http.get(f"/games/{table.game_id}/me", headers=auth)).json()
        if not me["legal_actions"]:
            return  # the game is over
        action = rng.choice(me["legal_actions"])
        response = await http.post(f"/games/{table.game_id}/actions", json=action, headers=auth)
        now = time.monotonic()
        if response.status_code != 200:
            answers.errors += 1
            continue
        result = response.json()
        answers.actions += 1
        for entry in result["events"]:
            answers.at[(table.game_id, entry["version"])] = now
        table.to_act = list(result["status"]["to_act"]) or table.to_act
