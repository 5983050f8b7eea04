"""The clients of benchmarks/sse_bench.py: event-stream subscribers on raw sockets and bots
that play through REST, each noting when things happened on one monotonic clock (same host,
same clock as the subscribers)."""

from __future__ import annotations

import asyncio
import random
import time
from dataclasses import dataclass, field
from typing import Any

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
    failure: bytes = b""
    """The start of the first answer that was not a stream."""


class Subscriber(asyncio.Protocol):
    """One subscriber on a raw socket. The stream's messages are found by scanning the bytes
    for `\nid: ` (a chunk-size line of the chunked encoding never holds it), which costs
    the client little: its own lag would count in the latency it measures."""

    def __init__(self, game_id: str, receipts: Receipts, ready: asyncio.Event) -> None:
        self.game_id, self.receipts, self.ready = game_id, receipts, ready
        self.tail = b""
        self.closed = asyncio.get_running_loop().create_future()

    def data_received(self, data: bytes) -> None:
        now = time.monotonic()
        text = self.tail + data
        if not self.ready.is_set():
            if len(text) < 12:
                self.tail = text
                return
            if not text.startswith(b"HTTP/1.1 200"):
                self.receipts.failures += 1
                self.receipts.failure = text[:300]
            self.ready.set()
        start = 0
        while (at := text.find(b"\nid: ", start)) >= 0:
            end = text.find(b"\n", at + 5)
            if end < 0:
                break
            if self.receipts.measuring:
                self.receipts.seen.append((self.game_id, int(text[at + 5 : end]), now))
            start = end
        self.receipts.heartbeats += data.count(b": keep-alive")
        self.tail = text[max(start, len(text) - 16) :]

    def connection_lost(self, exc: Exception | None) -> None:
        if not self.closed.done():
            self.closed.set_result(None)


async def subscribe(
    port: int, game_id: str, token: str | None, receipts: Receipts, ready: asyncio.Event
) -> None:
    """One subscriber: GET the game's stream, note each message's id as it arrives."""
    loop = asyncio.get_running_loop()
    transport, protocol = await loop.create_connection(
        lambda: Subscriber(game_id, receipts, ready), HOST, port
    )
    auth = f"Authorization: Bearer {token}\r\n" if token is not None else ""
    transport.write(
        f"GET /games/{game_id}/stream HTTP/1.1\r\nHost: bench\r\n"
        f"Accept: text/event-stream\r\n{auth}\r\n".encode()
    )
    try:
        await protocol.closed
    finally:
        transport.close()


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
