"""The fault run's load: players that open and play games over HTTP against random
instances, as a careful client does (an `Idempotency-Key` on every POST, the same key again
when an answer is lost: a connection error, a 5xx, a 429), and spectators that follow
games' event streams, resuming with `Last-Event-ID` on another instance when one ends.

The `Ledger` keeps every acknowledged write (its game, key, version and receipt), every
status answered, and what each watcher received, for the checks (benchmarks/fault/checks.py).
"""

from __future__ import annotations

import random
import threading
import time
import uuid
from collections import Counter
from dataclasses import dataclass, field
from typing import Any

import httpx

from tests.api.players import concrete
from tests.api.sse import Stream

GAME_WITHIN = 240.0
"""Seconds a player keeps at one game through faults before it gives it up (counted)."""
VARIANTS = [("golf", {"hands": 1}), ("basketball", {}), ("tens", {"hands": 1})]


class GaveUp(Exception):
    pass


class Stopped(Exception):
    """The run ended while a request was still unanswered: it is left so."""


@dataclass(frozen=True)
class Ack:
    """One acknowledged write: the client holds its receipt."""

    game_id: str
    kind: str  # claim, action, resign
    key: str
    version: int
    receipt: dict[str, Any]


@dataclass
class Watched:
    game_id: str
    versions: list[int] = field(default_factory=list)
    hashes: dict[int, str] = field(default_factory=dict)
    connects: int = 0
    ended: bool = False


@dataclass
class Ledger:
    lock: threading.Lock = field(default_factory=threading.Lock)
    acks: list[Ack] = field(default_factory=list)
    statuses: Counter[int] = field(default_factory=Counter)
    errors: Counter[str] = field(default_factory=Counter)
    five_hundreds: list[str] = field(default_factory=list)
    without_retry_after: list[str] = field(default_factory=list)
    games: list[str] = field(default_factory=list)
    finished: int = 0
    abandoned: int = 0
    watched: list[Watched] = field(default_factory=list)
    tournaments: list[str] = field(default_factory=list)
    tournaments_ended: int = 0

    def note(self, status: int, what: str) -> None:
        with self.lock:
            self.statuses[status] += 1
            if status == 500 or status > 503:
                self.five_hundreds.append(what)


class Client:
    """Requests to a random instance each time, retried with the same key until answered
    with neither a 5xx nor a 429, or until `deadline`."""

    def __init__(
        self, bases: list[str], ledger: Ledger, rng: random.Random, stop: threading.Event
    ) -> None:
        self.bases, self.ledger, self.rng, self.stop = bases, ledger, rng, stop
        self.http = httpx.Client(timeout=httpx.Timeout(15.0, connect=3.0))

    def call(
        self,
        method: str,
        path: str,
        body: Any = None,
        token: str | None = None,
        key: str | None = None,
        within: float = 90.0,
    ) -> httpx.Response:
        headers = {} if token is None else {"Authorization": f"Bearer {token}"}
        if key is not None:
            headers["Idempotency-Key"] = key
        deadline, pause = time.monotonic() + within, 0.05
        while True:
            base = self.rng.choice(self.bases)
            try:
                response = self.http.request(method, base + path, json=body, headers=headers)
            except httpx.TransportError as error:
                with self.ledger.lock:
                    self.ledger.errors[type(error).__name__] += 1
            else:
                what = f"{method} {path}: {response.status_code} {response.text[:300]}"
                self.ledger.note(response.status_code, what)
                if response.status_code in (429, 503) and "retry-after" not in response.headers:
                    with self.ledger.lock:
                        self.ledger.without_retry_after.append(what)
                if response.status_code < 500 and response.status_code != 429:
                    return response
            if self.stop.is_set():
                raise Stopped(f"{method} {path}")
            if time.monotonic() > deadline:
                raise GaveUp(f"{method} {path}")
            time.sleep(pause)
            pause = min(pause * 2, 1.0)

    def close(self) -> None:
        self.http.close()


def new_key() -> str:
    return str(uuid.uuid4())


class Player:
    """Opens two-seat games (some with a bot seat, some where a seat resigns and the referee
    plays it) and plays its seats' turns at random until each game ends."""

    def __init__(self, number: int, bases: list[str], ledger: Ledger, stop: threading.Event):
        self.number, self.ledger, self.stop = number, ledger, stop
        self.rng = random.Random(number)
        self.client = Client(bases, ledger, self.rng, stop)

    def run(self) -> None:
        try:
            while not self.stop.is_set():
                try:
                    self.play_one()
                except GaveUp:
                    with self.ledger.lock:
                        self.ledger.abandoned += 1
                except Stopped:
                    return
        finally:
            self.client.close()

    def ack(self, game_id: str, kind: str, key: str, body: dict[str, Any]) -> None:
        receipt = body["receipt"]
        with self.ledger.lock:
            self.ledger.acks.append(Ack(game_id, kind, key, int(receipt["version"]), receipt))

    def play_one(self) -> None:
        variant, options = self.rng.choice(VARIANTS)
        with_bot = self.rng.random() < 0.3
        request: dict[str, Any] = {"variant": variant, "seats": 2, "options": options}
        if with_bot:
            request["bots"] = [{"seat": 1, "level": "random"}]
        created = self.client.call("POST", "/games", request, key=new_key())
        assert created.status_code == 201, created.text
        game = created.json()
        game_id, creator = game["game_id"], game["creator_token"]
        tokens: dict[int, str] = {}
        for number in range(1 if with_bot else 2):
            key = new_key()
            path = f"/games/{game_id}/seats"
            claimed = self.client.call("POST", path, {"name": f"p{self.number}x{number}"}, key=key)
            assert claimed.status_code == 201, claimed.text
            tokens[claimed.json()["seat"]] = claimed.json()["token"]
            self.ack(game_id, "claim", key, claimed.json())
        if not with_bot:
            started = self.client.call(
                "POST", f"/games/{game_id}/start", token=creator, key=new_key()
            )
            assert started.status_code in (200, 201), started.text
        with self.ledger.lock:
            self.ledger.games.append(game_id)
        resign_after = self.rng.randint(2, 8) if not with_bot and self.rng.random() < 0.2 else -1
        self.play(game_id, tokens, resign_after)

    def play(self, game_id: str, tokens: dict[int, str], resign_after: int) -> None:
        deadline, moves = time.monotonic() + GAME_WITHIN, 0
        while time.monotonic() < deadline:
            if self.stop.is_set():
                return  # the run is over: the game stays unfinished
            view = self.client.call("GET", f"/games/{game_id}/view")
            status = view.json()["status"]
            if status["phase"] == "game_over":
                with self.ledger.lock:
                    self.ledger.finished += 1
                return
            mine = [seat for seat in status["to_act"] if seat in tokens]
            if not mine:
                time.sleep(0.05)  # a bot's or the referee's turn
                continue
            seat = self.rng.choice(mine)
            if moves == resign_after and len(tokens) == 2:
                self.resign(game_id, tokens, 1)
                continue
            me = self.client.call("GET", f"/games/{game_id}/me", token=tokens[seat])
            if me.status_code != 200 or not me.json()["legal_actions"]:
                continue
            body = me.json()
            action = concrete(self.rng.choice(body["legal_actions"]), self.rng)
            key = new_key()
            acted = self.client.call(
                "POST", f"/games/{game_id}/actions", action, token=tokens[seat], key=key
            )
            if acted.status_code == 200:
                self.ack(game_id, "action", key, acted.json())
                moves += 1
        raise GaveUp(game_id)

    def resign(self, game_id: str, tokens: dict[int, str], seat: int) -> None:
        key = new_key()
        path = f"/games/{game_id}/seats/{seat}/resign"
        resigned = self.client.call("POST", path, token=tokens[seat], key=key)
        if resigned.status_code == 200:
            self.ack(game_id, "resign", key, resigned.json())
        del tokens[seat]


class Watcher:
    """Follows games' streams as a spectator, one game at a time from its first event,
    resuming on any instance with `Last-Event-ID` whenever a stream ends before the game."""

    def __init__(self, number: int, bases: list[str], ledger: Ledger, stop: threading.Event):
        self.bases, self.ledger, self.stop = bases, ledger, stop
        self.rng = random.Random(1000 + number)

    def run(self) -> None:
        while not self.stop.is_set():
            with self.ledger.lock:
                games = self.ledger.games[-20:]
            if not games:
                time.sleep(0.2)
                continue
            watched = Watched(self.rng.choice(games))
            with self.ledger.lock:
                self.ledger.watched.append(watched)
            self.follow(watched)

    def follow(self, watched: Watched) -> None:
        deadline = time.monotonic() + GAME_WITHIN
        while not watched.ended and not self.stop.is_set() and time.monotonic() < deadline:
            headers = {"Last-Event-ID": str(watched.versions[-1])} if watched.versions else {}
            base = self.rng.choice(self.bases)
            try:
                stream = Stream(base, f"/games/{watched.game_id}/stream", headers=headers)
            except (OSError, AssertionError):
                time.sleep(0.2)
                continue
            watched.connects += 1
            try:
                while not stream.ended.wait(0.25):
                    if self.stop.is_set():
                        break
            finally:
                stream.close()
            self.ledger.note(stream.status, f"stream {watched.game_id}: {stream.body[:300]!r}")
            for message in list(stream.messages):
                if message.id is None:
                    continue  # `reconnect` on shutdown: no event
                entry = message.entry
                watched.versions.append(int(message.id))
                watched.hashes[int(message.id)] = entry.get("hash") or ""
                if message.event == "game.ended":
                    watched.ended = True
            if stream.status == 204:
                watched.ended = True
            if stream.status != 200:
                time.sleep(0.2)
