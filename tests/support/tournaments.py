"""Synthetic tournament histories for the standings and ratings read models: a
tournament's own events and its games' events (no cards: the read models read totals only),
in an order the tournament service could append them in, with casual games between.

And the oracle: the standings recomputed from such a history straight from the events,
by code that shares nothing with projections/standings.py but the standings function.
"""

from __future__ import annotations

import random
import uuid
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from domain.tournament.standings import RoundResult, Row, Seat, round_mean, standings
from domain.variants import high_wins
from events.schema.common import GameEnded, GameOptions, GameStarted, HandEnded
from events.schema.lobby import GameCreated, SeatClaimed, SeatResigned
from events.schema.tournament import (
    PlayerRegistered,
    PlayerWithdrawn,
    RoundClosed,
    RoundStarted,
    TableResult,
    TableSeats,
    TournamentCreated,
    TournamentEnded,
)
from events.store import EventStore, NewEvent
from events.store.base import RecordedEvent
from tests.support.feeds import record

NAMES = (
    "Ada", "Brian", "Chen", "Dora", "Eve", "Femi", "Grace", "Hugo", "Ines", "Jun", "Kofi",
    "Lena", "=cmd", "O'Neil, Jr.", "Zoë \"Z\"",
)  # fmt: skip
"""Some with a comma, quotes or a leading `=`, for the CSV."""

Entry = tuple[str, Any]
"""(stream id, event)."""


@dataclass
class _Game:
    stream: str
    players: tuple[str, ...]
    hands: int
    totals: list[int]
    played: int = 0
    resigned: list[int] = field(default_factory=list)
    ended: bool = False
    winners: tuple[int, ...] = ()


def tournament_history(
    seed: int,
    *,
    tournament: str | None = None,
    variant: str | None = None,
    players: int | None = None,
    rounds: int | None = None,
    finish: bool | None = None,
) -> list[Entry]:
    """A tournament's history in feed order: created, players registered (a few late),
    rounds started, their games played hand by hand (games taking turns at random, a seat
    now and then resigned, a player now and then withdrawn), rounds closed; the last round
    left in play unless `finish`, which also ends the tournament. A casual game or two too."""
    rng = random.Random(seed)
    tid = tournament or uuid.UUID(int=rng.getrandbits(128)).hex[:16]
    variant = variant or rng.choice(("golf", "basketball", "hang-ten", "tens"))
    high = high_wins(variant)
    size = rng.choice((2, 3, 4))
    count = players or rng.randint(size, 11)
    planned = rounds or rng.randint(1, 3)
    finish = rng.random() < 0.5 if finish is None else finish
    stream = f"tournament:{tid}"
    out: list[Entry] = [
        (
            stream,
            TournamentCreated(
                f"Cup {seed}", variant, GameOptions(), size, planned, "swiss", False, "o" * 64,
                "a" * 64,
            ),
        )
    ]  # fmt: skip
    names = list(NAMES[:count])
    rng.shuffle(names)
    late = names[count - rng.randint(0, 2) :] if count > size + 2 else []
    registered: list[str] = []
    withdrawn: list[str] = []

    def register(name: str) -> None:
        registered.append(name)
        out.append((stream, PlayerRegistered(name, f"{len(registered):x}" * 64)))

    for name in names:
        if name not in late:
            register(name)
    out.extend(_casual(rng))
    for number in range(1, planned + 1):
        if number == 2:
            for name in late:
                register(name)
        active = [p for p in registered if p not in withdrawn]
        rng.shuffle(active)
        tables = len(active) // size
        byes = tuple(active[tables * size :])
        games = []
        for table in range(1, tables + 1):
            seated = tuple(active[(table - 1) * size : table * size])
            gid = uuid.UUID(int=rng.getrandbits(128)).hex[:16]
            game = _Game(f"game:{gid}", seated, rng.randint(1, 3), [0] * size)
            games.append(game)
            out.append(
                (
                    game.stream,
                    GameCreated(
                        variant, size, GameOptions(), "c" * 64, tournament=tid, round=number,
                        table=table,
                    ),
                )
            )  # fmt: skip
            for seat, name in enumerate(seated):
                out.append((game.stream, SeatClaimed(seat, name, f"{seat:x}" * 64)))
            out.append((game.stream, GameStarted(variant, size, GameOptions())))
        out.append(
            (
                stream,
                RoundStarted(
                    number,
                    tuple(
                        TableSeats(t, g.stream.removeprefix("game:"), g.players)
                        for t, g in enumerate(games, start=1)
                    ),
                    byes,
                ),
            )
        )
        last = number == planned
        stop_at = None if finish or not last else rng.randint(0, sum(g.hands for g in games))
        steps = 0
        while any(not g.ended for g in games):
            if stop_at is not None and steps >= stop_at:
                return out
            game = rng.choice([g for g in games if not g.ended])
            out.extend(_step(rng, game, high))
            steps += 1
            if rng.random() < 0.05 and len(withdrawn) < count // 3:
                who = rng.choice([p for p in registered if p not in withdrawn])
                withdrawn.append(who)
                out.append((stream, PlayerWithdrawn(who, number)))
                for g in games:
                    if who in g.players and not g.ended:
                        seat = g.players.index(who)
                        if seat not in g.resigned:
                            g.resigned.append(seat)
                            out.append((g.stream, SeatResigned(seat, "withdrawn")))
        results = tuple(
            TableResult(t, g.stream.removeprefix("game:"), g.players, tuple(g.totals),
                        g.played, g.winners, tuple(sorted(g.resigned)))
            for t, g in enumerate(games, start=1)
        )  # fmt: skip
        bye_score = round_mean(total for g in games for total in g.totals)
        out.append((stream, RoundClosed(number, results, byes, bye_score if byes else 0, "s")))
        if rng.random() < 0.3:
            out.extend(_casual(rng))
    if finish:
        out.append((stream, TournamentEnded(planned)))
    return out


def _step(rng: random.Random, game: _Game, high: bool) -> list[Entry]:
    """One hand of `game` (and its end after the last), or a seat resigning."""
    size = len(game.players)
    if rng.random() < 0.08 and len(game.resigned) < size - 1:
        seat = rng.choice([s for s in range(size) if s not in game.resigned])
        game.resigned.append(seat)
        return [(game.stream, SeatResigned(seat, "resigned"))]
    game.played += 1
    scores = tuple(rng.randint(-5, 30) for _ in range(size))
    game.totals = [t + s for t, s in zip(game.totals, scores, strict=True)]
    out: list[Entry] = [
        (game.stream, HandEnded(game.played, "out", "", scores, tuple(game.totals)))
    ]
    if game.played == game.hands:
        best = max(game.totals) if high else min(game.totals)
        game.winners = tuple(s for s, t in enumerate(game.totals) if t == best)
        game.ended = True
        out.append((game.stream, GameEnded(tuple(game.totals), game.winners)))
    return out


def _casual(rng: random.Random) -> list[Entry]:
    """A casual game, begun and ended (its names rated, never in any standings)."""
    stream = f"game:{uuid.UUID(int=rng.getrandbits(128)).hex[:16]}"
    size = rng.choice((2, 3))
    names = rng.sample(NAMES, size)
    totals = tuple(rng.randint(0, 40) for _ in range(size))
    best = min(totals)
    return [
        (stream, GameCreated("golf", size, GameOptions(), "c" * 64)),
        *((stream, SeatClaimed(seat, name, "d" * 64)) for seat, name in enumerate(names)),
        (stream, GameStarted("golf", size, GameOptions())),
        (stream, HandEnded(1, "out", "", totals, totals)),
        (stream, GameEnded(totals, tuple(s for s, t in enumerate(totals) if t == best))),
    ]


async def append_history(store: EventStore, history: Sequence[Entry]) -> None:
    """Append in order, each run of one stream's consecutive events in one append."""
    versions: dict[str, int] = {}
    i = 0
    while i < len(history):
        stream = history[i][0]
        run = []
        while i < len(history) and history[i][0] == stream:
            run.append(NewEvent(uuid.uuid4(), history[i][1], {}))
            i += 1
        at = versions.get(stream, 0)
        await store.append(stream, at, run)
        versions[stream] = at + len(run)


# ---- the oracle --------------------------------------------------------------------------


def expected_standings(history: Sequence[Entry], as_of: int | None = None) -> list[Row]:
    """The standings straight from the events: closed rounds from `round.closed` (up to
    `as_of`, over the players registered and withdrawn when it closed), and, live, the
    live round's games as their last `hand.ended` and `game.ended` left them."""
    created = next(e for _, e in history if isinstance(e, TournamentCreated))
    high = high_wins(created.variant)
    registered: list[str] = []
    withdrawn: list[str] = []
    closed: list[RoundResult] = []
    live: RoundStarted | None = None
    totals: dict[str, tuple[tuple[int, ...], int]] = {}
    ended: dict[str, tuple[int, ...]] = {}
    resigned: dict[str, set[int]] = {}
    for stream, event in history:
        gid = stream.removeprefix("game:")
        if isinstance(event, PlayerRegistered):
            registered.append(event.name)
        elif isinstance(event, PlayerWithdrawn):
            withdrawn.append(event.name)
        elif isinstance(event, RoundStarted):
            live = event
        elif isinstance(event, HandEnded):
            totals[gid] = (event.totals, event.hand)
        elif isinstance(event, GameEnded):
            ended[gid] = event.winners
        elif isinstance(event, SeatResigned):
            resigned.setdefault(gid, set()).add(event.seat)
        elif isinstance(event, RoundClosed):
            seats = tuple(
                Seat(p, r.totals[s], r.hands, s in r.winners and s not in r.resigned)
                for r in event.results
                for s, p in enumerate(r.players)
            )
            closed.append(RoundResult(event.round, seats, event.byes, event.bye_score))
            live = None
            if as_of == event.round:
                return standings(registered, closed, high, withdrawn)
    assert as_of is None, f"round {as_of} never closed"
    rounds = list(closed)
    if live is not None:
        seats = []
        for table in live.tables:
            game_totals, hands = totals.get(table.game_id, ((0,) * len(table.players), 0))
            winners = ended.get(table.game_id, ())
            out = resigned.get(table.game_id, set())
            for seat, player in enumerate(table.players):
                won = seat in winners and seat not in out
                seats.append(Seat(player, game_totals[seat], hands, won))
        rounds.append(RoundResult(live.round, tuple(seats)))
    return standings(registered, rounds, high, withdrawn)


def recorded(history: Sequence[Entry]) -> list[RecordedEvent]:
    """The history as a feed (positions from 1), without a store."""
    versions: dict[str, int] = {}
    out = []
    for position, (stream, event) in enumerate(history, start=1):
        versions[stream] = versions.get(stream, 0) + 1
        out.append(record(stream, versions[stream], position, event))
    return out


def closed_rounds(history: Sequence[Entry]) -> list[int]:
    return [e.round for _, e in history if isinstance(e, RoundClosed)]
