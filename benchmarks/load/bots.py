"""The bots: each opens a table over HTTP, holds every seat's token and plays it out, one
action at a time, picking the seat from the last answer's `status.to_act`; the scripted bot
knows enough of Hang Ten and Tens to ask GET /me only when refused."""

from __future__ import annotations

import argparse
import asyncio
import random
import time
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import Any

import msgspec

from benchmarks.load.client import Client, HttpError
from benchmarks.load.pacing import Pace
from benchmarks.load.stats import Stats
from domain.shedding.options import pick
from events.schema.shedding import ChooseStacksOption, PlayOption

# ---- the responses the bots read (msgspec skips every other field) ---------------------------


class Status(msgspec.Struct):
    phase: str
    hand: int
    to_act: list[int]


class Opened(msgspec.Struct):
    game_id: str
    creator_token: str


class Granted(msgspec.Struct):
    token: str


class Summary(msgspec.Struct):
    version: int
    status: Status | None


class Result(msgspec.Struct):
    version: int
    status: Status | None


class Me(msgspec.Struct):
    version: int
    legal_actions: list[Any]


DECODE_OPENED = msgspec.json.Decoder(Opened).decode
DECODE_GRANTED = msgspec.json.Decoder(Granted).decode
DECODE_SUMMARY = msgspec.json.Decoder(Summary).decode
DECODE_RESULT = msgspec.json.Decoder(Result).decode
DECODE_ME = msgspec.json.Decoder(Me).decode
ENCODE = msgspec.json.encode


def concrete(listed: Any, rng: random.Random) -> Any:
    """The action to post for one listed item: an option (Tens-shedding's choose-stacks or
    play descriptor) becomes one of the actions it covers, drawn by the domain's `pick`."""
    if isinstance(listed, dict) and ("count" in listed or "rank" in listed):
        option = msgspec.convert(listed, ChooseStacksOption | PlayOption)
        return pick(option, rng)
    return listed


# Request bodies, encoded once.
DRAW_STOCK = ENCODE({"type": "draw", "source": "stock"})
SETUP = [[ENCODE({"type": "setup-flip", "row": r, "col": c}) for c in range(5)] for r in range(2)]
REPLACE = [[ENCODE({"type": "replace", "row": r, "col": c}) for c in range(5)] for r in range(2)]
# Setup flips that satisfy each variant's setup rule (rows-apart; not-adjacent).
SETUP_PLAN = {"hang-ten": [(0, 0), (1, 1)], "tens": [(0, 0), (1, 1), (0, 2)]}
SCRIPTED = set(SETUP_PLAN)


@dataclass
class Table:
    game_id: str
    creator: str
    tokens: list[str]
    status: Status
    version: int


async def open_table(
    client: Client, variant: str, seats: int, options: dict[str, Any], stats: Stats | None
) -> Table:
    def count() -> None:
        if stats is not None and stats.measuring:
            stats.other += 1

    code, body = await client.call(
        "POST", "/games", ENCODE({"variant": variant, "seats": seats, "options": options})
    )
    count()
    if code != 201:
        raise HttpError(f"POST /games: {code} {body[:300]!r}")
    opened = DECODE_OPENED(body)
    tokens = []
    for seat in range(seats):
        code, body = await client.call(
            "POST", f"/games/{opened.game_id}/seats", ENCODE({"name": f"bot {seat}"})
        )
        count()
        if code != 201:
            raise HttpError(f"POST seats: {code} {body[:300]!r}")
        tokens.append(DECODE_GRANTED(body).token)
    code, body = await client.call(
        "POST", f"/games/{opened.game_id}/start", b"", token=opened.creator_token
    )
    count()
    if code != 200:
        raise HttpError(f"POST start: {code} {body[:300]!r}")
    summary = DECODE_SUMMARY(body)
    assert summary.status is not None
    return Table(opened.game_id, opened.creator_token, tokens, summary.status, summary.version)


class Bot:
    """Plays one table: picks a seat from `status.to_act`, an action, posts it."""

    def __init__(self, variant: str, kind: str, rng: random.Random) -> None:
        self.variant = variant
        self.scripted = kind == "scripted" and variant in SCRIPTED
        self.rng = rng
        self.hand = -1
        self.setups: list[int] = []
        self.drawn: list[bool] = []
        self.cursor: list[int] = []
        self.unknown: set[int] = set()

    def reset(self, table: Table) -> None:
        seats = len(table.tokens)
        self.hand = table.status.hand
        self.setups = [0] * seats
        self.drawn = [False] * seats
        self.cursor = [self.rng.randrange(10) for _ in range(seats)]
        self.unknown = set()

    def guess(self, seat: int, status: Status) -> bytes | None:
        """An action this seat may take now, or None: ask GET /me."""
        if not self.scripted or seat in self.unknown:
            return None
        if status.phase == "setup":
            plan = SETUP_PLAN[self.variant]
            done = self.setups[seat]
            return SETUP[plan[done][0]][plan[done][1]] if done < len(plan) else None
        if status.phase == "playing":
            if not self.drawn[seat]:
                return DRAW_STOCK
            at = self.cursor[seat] % 10
            return REPLACE[at // 5][at % 5]
        return None

    def done(self, seat: int, action: bytes) -> None:
        """The action was accepted: track what this seat did this hand."""
        if action.startswith(b'{"type":"draw"'):
            self.drawn[seat] = True
        elif action.startswith((b'{"type":"replace"', b'{"type":"discard"')):
            self.drawn[seat] = False
            self.cursor[seat] += 1
        elif action.startswith(b'{"type":"setup-flip"'):
            self.setups[seat] += 1


async def act_once(
    client: Client, table: Table, bot: Bot, stats: Stats, always_me: bool, late: float = 0.0
) -> None:
    """One action on `table` by a seat whose turn it is (updates `table.status`); `late`
    (s behind schedule) is added to the latency recorded."""
    status = table.status
    if status.hand != bot.hand:
        bot.reset(table)
    seat = status.to_act[0] if len(status.to_act) == 1 else bot.rng.choice(status.to_act)
    token = table.tokens[seat]
    action = None if always_me else bot.guess(seat, status)
    if action is None:
        code, body = await client.call("GET", f"/games/{table.game_id}/me", token=token)
        if stats.measuring:
            stats.me += 1
        if code != 200:
            stats.failures[f"GET /me {code}"] += 1
            return
        legal = DECODE_ME(body).legal_actions
        if not legal:  # the status moved on meanwhile (cannot happen with one bot per game)
            stats.failures["no legal action"] += 1
            return
        action = ENCODE(concrete(bot.rng.choice(legal), bot.rng))
        if not always_me:
            stats.fallbacks += 1
    started = time.perf_counter() - late
    code, body = await client.call("POST", f"/games/{table.game_id}/actions", action, token)
    elapsed = time.perf_counter() - started
    if stats.measuring:
        if code == 200:
            stats.actions += 1
            stats.action_latency.append(elapsed)
            stats.finished_at.append(started + elapsed)
        else:
            stats.action_errors[code] += 1
    if code == 200:
        stats.answered += 1
        result = DECODE_RESULT(body)
        assert result.status is not None
        table.status, table.version = result.status, result.version
        bot.done(seat, action)
        bot.unknown.discard(seat)
    else:
        # Refused (e.g. the script's guess was not legal): ask /me for this seat next time.
        bot.unknown.add(seat)
        if code >= 500 or code not in (409, 422):
            stats.failures[f"POST /actions {code}: {body[:200]!r}"] += 1


Opener = Callable[[Client, str, int, dict[str, Any], Stats | None], Awaitable[Table]]
"""How a bot opens a table: `open_table` on Fairway; benchmarks/load/bgio.py's on
boardgame.io (its lobby routes), whose answers to actions have the same shape."""


async def play(
    client: Client,
    args: argparse.Namespace,
    rate: float,
    stats: Stats,
    stop: asyncio.Event,
    seed: int,
    opener: Opener = open_table,
) -> None:
    rng = random.Random(seed)
    options = game_options(args)
    table: Table | None = None
    bot = Bot(args.variant, args.bot, rng)
    pace = Pace(rate, args.games, rng)
    while not stop.is_set():
        try:
            late = await pace.wait()
            if table is None or table.status.phase == "game_over":
                if table is not None and stats.measuring:
                    stats.games_finished += 1
                started = time.perf_counter()
                table = await opener(client, args.variant, args.seats, options, stats)
                stats.opened += 1
                late += time.perf_counter() - started
                bot.hand = -1
            await act_once(client, table, bot, stats, args.bot == "random", late)
        except (OSError, HttpError, msgspec.DecodeError) as error:
            stats.failures[type(error).__name__ + ": " + str(error)[:120]] += 1
            await asyncio.sleep(0.05)


def game_options(args: argparse.Namespace) -> dict[str, Any]:
    options: dict[str, Any] = {}
    if args.hands:
        options["hands"] = args.hands
    if args.turn_limit:
        options["turn_limit"] = args.turn_limit
    return options
