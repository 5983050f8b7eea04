"""Synthetic tournament histories for the standings and ratings read models: a
tournament's own events and its games' events (real bot games, so that every read model
folds them), in an order the tournament service could append them in, with casual games
between.

And the oracle: the standings recomputed from such a history straight from the events,
by code that shares nothing with projections/standings.py but the standings function.
"""

from __future__ import annotations

import random
import uuid
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from domain.simulate import play_game
from domain.tournament.standings import RoundResult, Row, Seat, round_mean, standings
from domain.variants import DECIDERS, bot, high_wins
from events.schema.common import GameEnded, GameOptions, HandEnded
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

BOT_LEVELS = ("random", "greedy", "strong")

Entry = tuple[str, Any]
"""(stream id, event)."""


VARIANTS: dict[str, tuple[GameOptions, tuple[int, ...]]] = {
    "golf": (GameOptions(hands=3), (2, 3, 4)),
    "tens": (GameOptions(hands=2), (2, 3)),
    "basketball": (GameOptions(), (2, 3)),
}
"""Variants whose bot games are short, with the table sizes they seat (Basketball: high
totals win)."""


@dataclass
class _Game:
    """One table's game, played by bots with real cards beforehand, handed out a piece at a
    time: each hand in two pieces (so a game may stand mid-hand), `game.ended` with the
    last."""

    stream: str
    players: tuple[str, ...]
    pieces: list[list[Any]]
    totals: tuple[int, ...]
    hands: int = 0
    resigned: list[int] = field(default_factory=list)
    winners: tuple[int, ...] = ()

    @property
    def ended(self) -> bool:
        return not self.pieces


def _played(rng: random.Random, variant: str, players: int) -> list[Any]:
    """A whole game's events after its lobby, from `game.started` to `game.ended`."""
    options, _ = VARIANTS[variant]
    bots = [bot(rng.choice(("random", "greedy")), variant) for _ in range(players)]
    return list(play_game(DECIDERS[variant], players, bots, rng.randbytes(32), rng, options).events)


def _pieces(events: list[Any]) -> list[list[Any]]:
    pieces: list[list[Any]] = []
    hand: list[Any] = []
    for event in events:
        if isinstance(event, GameEnded) and pieces and not hand:
            pieces[-1].append(event)  # with the last hand's end
            continue
        hand.append(event)
        if isinstance(event, HandEnded):
            half = len(hand) // 2
            pieces += [piece for piece in (hand[:half], hand[half:]) if piece]
            hand = []
    if hand:
        pieces.append(hand)
    return pieces


def tournament_history(
    seed: int,
    *,
    tournament: str | None = None,
    variant: str | None = None,
    players: int | None = None,
    rounds: int | None = None,
    finish: bool | None = None,
    size: int | None = None,
    churn: bool = True,
    duplicate: bool = False,
) -> list[Entry]:
    """A tournament's history in feed order: created, players registered (a few late),
    rounds started, their games (real bot games) played a piece at a time, games taking
    turns at random, a seat now and then resigned, a player now and then withdrawn (their
    seats in play resigned), rounds closed; the last round left in play unless `finish`,
    which also ends the tournament. A casual game or two too. `size`: players per table
    (else one the variant seats, at random). Some players are bots (their seats bot
    seats). Without `churn`, every player registers at once and nobody resigns or
    withdraws. `duplicate`: the tournament says it deals duplicate and scores matchpoints
    (its games' cards still differ: the read models compare what the events say)."""
    rng = random.Random(seed)
    tid = tournament or uuid.UUID(int=rng.getrandbits(128)).hex[:16]
    variant = variant or rng.choice(tuple(VARIANTS))
    options, sizes = VARIANTS[variant]
    size = size or rng.choice(sizes)
    count = players or rng.randint(size, 11)
    planned = rounds or rng.randint(1, 3)
    finish = rng.random() < 0.5 if finish is None else finish
    stream = f"tournament:{tid}"
    out: list[Entry] = [
        (
            stream,
            TournamentCreated(
                f"Cup {seed}", variant, options, size, planned, "swiss", duplicate, "o" * 64,
                "a" * 64, scoring="matchpoints" if duplicate else "total",
            ),
        )
    ]  # fmt: skip
    names = [*NAMES, *(f"Player {i:03}" for i in range(len(NAMES), count))][:count]
    rng.shuffle(names)
    late = names[count - rng.randint(0, 2) :] if churn and count > size + 2 else []
    registered: list[str] = []
    withdrawn: list[str] = []
    # Bot players, drawn apart so that the rest of the history is what it was before bots.
    drawn = random.Random(f"bots {seed}")
    bots = {n: drawn.choice(BOT_LEVELS) for n in names if drawn.random() < 0.3}

    def register(name: str) -> None:
        registered.append(name)
        digest = "" if name in bots else f"{len(registered):x}" * 64
        out.append((stream, PlayerRegistered(name, digest, bots.get(name, ""))))

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
            played = _played(rng, variant, size)
            final = played[-1]
            assert isinstance(final, GameEnded)
            game = _Game(f"game:{gid}", seated, _pieces(played), final.totals)
            games.append(game)
            out.append(
                (
                    game.stream,
                    GameCreated(
                        variant, size, options, "c" * 64, tournament=tid, round=number,
                        table=table,
                    ),
                )
            )  # fmt: skip
            for seat, name in enumerate(seated):
                digest = "" if name in bots else f"{seat:x}" * 64
                out.append((game.stream, SeatClaimed(seat, name, digest, bots.get(name, ""))))
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
        stop_at = None if finish or not last else rng.randint(0, sum(len(g.pieces) for g in games))
        steps = 0
        while any(not g.ended for g in games):
            if stop_at is not None and steps >= stop_at:
                return out
            game = rng.choice([g for g in games if not g.ended])
            out.extend(_step(rng, game, churn))
            steps += 1
            if churn and rng.random() < 0.05 and len(withdrawn) < count // 3:
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
            TableResult(t, g.stream.removeprefix("game:"), g.players, g.totals, g.hands,
                        g.winners, tuple(sorted(g.resigned)))
            for t, g in enumerate(games, start=1)
        )  # fmt: skip
        bye_score = round_mean(total for g in games for total in g.totals)
        out.append((stream, RoundClosed(number, results, byes, bye_score if byes else 0, "s")))
        if rng.random() < 0.3:
            out.extend(_casual(rng))
    if finish:
        out.append((stream, TournamentEnded(planned)))
    return out


def _step(rng: random.Random, game: _Game, churn: bool) -> list[Entry]:
    """The next piece of `game`, or (with `churn`) now and then a seat resigning."""
    size = len(game.players)
    if churn and rng.random() < 0.08 and len(game.resigned) < size - 1:
        seat = rng.choice([s for s in range(size) if s not in game.resigned])
        game.resigned.append(seat)
        return [(game.stream, SeatResigned(seat, "resigned"))]
    piece = game.pieces.pop(0)
    for event in piece:
        if isinstance(event, HandEnded):
            game.hands += 1
        elif isinstance(event, GameEnded):
            game.winners = event.winners
    return [(game.stream, event) for event in piece]


def _casual(rng: random.Random) -> list[Entry]:
    """A casual game of real golf, begun and ended (its names rated, never in any
    standings)."""
    stream = f"game:{uuid.UUID(int=rng.getrandbits(128)).hex[:16]}"
    size = rng.choice((2, 3))
    names = rng.sample(NAMES, size)
    options, _ = VARIANTS["golf"]
    return [
        (stream, GameCreated("golf", size, options, "c" * 64)),
        *((stream, SeatClaimed(seat, name, "d" * 64)) for seat, name in enumerate(names)),
        *((stream, event) for event in _played(rng, "golf", size)),
    ]


async def append_history(
    store: EventStore, history: Sequence[Entry], versions: dict[str, int] | None = None
) -> dict[str, int]:
    """Append in order, each run of one stream's consecutive events in one append, after
    the versions in `versions` (updated, and returned: a history may come in parts)."""
    versions = {} if versions is None else versions
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
    return versions


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


def expected_bots(history: Sequence[Entry]) -> dict[str, str]:
    """Each bot player's level, by name, as the tournament registered it."""
    return {e.name: e.bot for _, e in history if isinstance(e, PlayerRegistered) and e.bot}


def closed_rounds(history: Sequence[Entry]) -> list[int]:
    return [e.round for _, e in history if isinstance(e, RoundClosed)]
