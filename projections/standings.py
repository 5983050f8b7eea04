"""Each tournament's standings: its closed rounds' results and its live round's games, kept
so that the standings now, as of any closed round, and each round table by table can be
answered by the one standings function (domain/tournament/standings.py).

The keys:
- `tournament:<id>`: the tournament as the standings need it: variant, who is registered
  (and which of them are bots, at which level) and who withdrew, each closed round's
  results (with who was registered and withdrawn when it closed, so "as of round N" is
  what the standings said then), the live round's tables and byes, and whether it ended.
  Written at the tournament's own events.
- `game:<game_id>`: one game of a tournament, as it goes: its tournament, round and table,
  each seat's total after the hands ended so far, the hands ended, the phase, the winners
  and the seats that resigned. Written at the game's own events (a casual game has none).

A game event does not say its tournament, so the live standings are not written anywhere:
the reader folds `tournament:<id>` with the `game:<id>` docs of its live round (`live`),
two reads. Every doc holds a `revision`: the feed position of the last event that changed
what it says, so the revision of an answer (the largest of its docs') grows whenever the
standings or results change, is the same after a rebuild, and never repeats.

A bye counts when its round closes (its score is the round's mean, known only then). Nothing
here names a card: totals, hands, winners and names are public from the moment they exist.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import msgspec

from domain.tournament.matchpoints import hand_scores
from domain.tournament.standings import Row, standings
from domain.tournament.state import round_result
from domain.variants import high_wins
from events.schema.common import GameEnded, GameStarted, HandEnded
from events.schema.lobby import GameCreated, SeatResigned
from events.schema.tournament import (
    PlayerRegistered,
    PlayerWithdrawn,
    RoundClosed,
    RoundStarted,
    TableResult,
    TournamentCreated,
    TournamentEnded,
)
from events.store.base import RecordedEvent
from projections.base import Doc, Put, Write
from projections.folds import game_id

TOURNAMENT_PREFIX = "tournament:"
_TOURNAMENT = (
    TournamentCreated,
    PlayerRegistered,
    PlayerWithdrawn,
    RoundStarted,
    RoundClosed,
    TournamentEnded,
)
_GAME = (GameCreated, GameStarted, HandEnded, GameEnded, SeatResigned)
_TOURNAMENT_TYPES = frozenset(_TOURNAMENT)
_GAME_TYPES = frozenset(_GAME)
"""Exact types (events are never subclassed): a set lookup per event is cheaper than
`isinstance` against a tuple, and every event of the feed goes through it."""


def tournament_id(event: RecordedEvent) -> str | None:
    stream = event.stream_id
    return stream[len(TOURNAMENT_PREFIX) :] if stream.startswith(TOURNAMENT_PREFIX) else None


def tournament_key(tournament: str) -> str:
    return f"tournament:{tournament}"


def game_key(game: str) -> str:
    return f"game:{game}"


# ---- the stored documents ------------------------------------------------------------------


class ClosedRound(msgspec.Struct, frozen=True):
    round: int
    results: tuple[TableResult, ...]
    byes: tuple[str, ...]
    bye_score: int
    registered: int
    """How many players (a prefix of `Tournament.players`) were registered when it closed."""
    withdrawn: tuple[str, ...]
    """Who had withdrawn when it closed."""
    revision: int
    scores: tuple[tuple[tuple[int, ...], ...], ...] = ()
    """Duplicate deals: each table's hand scores (by `results`, then hand, then seat), the
    boards its matchpoints and travellers are computed from (projections/boards.py)."""


class LiveTable(msgspec.Struct, frozen=True):
    table: int
    game_id: str
    players: tuple[str, ...]


class LiveRound(msgspec.Struct, frozen=True):
    round: int
    tables: tuple[LiveTable, ...]
    byes: tuple[str, ...] = ()


class Tournament(msgspec.Struct, frozen=True):
    """The stored `tournament:<id>` document."""

    name: str
    variant: str
    high_wins: bool
    rounds: int
    """Rounds planned."""
    players: tuple[str, ...] = ()
    """In order of registration."""
    withdrawn: tuple[str, ...] = ()
    closed: tuple[ClosedRound, ...] = ()
    """In round order: round N is `closed[N - 1]`."""
    live: LiveRound | None = None
    ended: bool = False
    revision: int = 0
    duplicate: bool = False
    """Whether every table of a round is dealt the same cards: then a live round is shown
    only as far as every table still playing has got (`live_tables`)."""
    scoring: str = "total"
    """`total` or `matchpoints`: what the standings rank by (projections/boards.py)."""
    bots: dict[str, str] = msgspec.field(default_factory=dict)
    """Each bot player's level, by name (its seats are bot seats)."""


class TableGame(msgspec.Struct, frozen=True):
    """The stored `game:<game_id>` document of a tournament's game."""

    tournament: str
    round: int
    table: int
    seats: int
    phase: str = "waiting"
    """`waiting` (not started), `playing`, `ended`."""
    totals: tuple[int, ...] = ()
    """Each seat's total after the hands ended so far (empty before the first)."""
    hands: int = 0
    winners: tuple[int, ...] = ()
    resigned: tuple[int, ...] = ()
    revision: int = 0
    history: tuple[tuple[int, ...], ...] = ()
    """Each seat's total after each hand ended, hand by hand (`totals` is the last)."""


def _doc(value: msgspec.Struct) -> Doc:
    return msgspec.to_builtins(value)  # type: ignore[no-any-return]


# ---- the projection ------------------------------------------------------------------------


class StandingsProjection:
    name = "standings"
    version = 3
    """2: bot players marked (`Tournament.bots`); 3: the scoring, and each closed duplicate
    round's hand scores (`ClosedRound.scores`), which a rebuild reads from the games."""
    types = _TOURNAMENT_TYPES | _GAME_TYPES

    def keys(self, event: RecordedEvent) -> Sequence[str]:
        kind = type(event.data)
        if kind in _TOURNAMENT_TYPES:
            tournament = tournament_id(event)
            if tournament is None:
                return ()
            if kind is RoundClosed:  # the games' hand scores, kept for the boards
                games = [game_key(result.game_id) for result in event.data.results]
                return (tournament_key(tournament), *games)
            return (tournament_key(tournament),)
        if kind in _GAME_TYPES:
            game = game_id(event)
            return () if game is None else (game_key(game),)
        return ()

    def apply(self, event: RecordedEvent, docs: Mapping[str, Doc | None]) -> Sequence[Write]:
        data = event.data
        kind = type(data)
        if kind not in _GAME_TYPES and kind not in _TOURNAMENT_TYPES:
            return ()
        if kind in _TOURNAMENT_TYPES:
            tournament = tournament_id(event)
            if tournament is None:
                return ()
            key = tournament_key(tournament)
            doc = docs.get(key)
            new = _tournament(data, event, None if doc is None else _load(doc, Tournament), docs)
            return () if new is None else (Put(key, _doc(new)),)
        if isinstance(data, _GAME):
            game = game_id(event)
            if game is None:
                return ()
            key = game_key(game)
            doc = docs.get(key)
            table = _game(data, event, None if doc is None else _load(doc, TableGame))
            return () if table is None else (Put(key, _doc(table)),)
        return ()


def _load(doc: Doc, kind: type[Any]) -> Any:
    return msgspec.convert(doc, kind)


def _tournament(
    data: Any, event: RecordedEvent, doc: Tournament | None, docs: Mapping[str, Doc | None]
) -> Tournament | None:
    position = event.global_position
    if isinstance(data, TournamentCreated):
        return Tournament(
            name=data.name,
            variant=data.variant,
            high_wins=high_wins(data.variant),
            rounds=data.rounds,
            revision=position,
            duplicate=data.duplicate,
            scoring=data.scoring,
        )
    if doc is None:
        raise ValueError(f"{event.stream_id} v{event.version}: no tournament before it")
    if isinstance(data, PlayerRegistered):
        if data.name in doc.players:
            return None
        bots = doc.bots | {data.name: data.bot} if data.bot else doc.bots
        players = (*doc.players, data.name)
        return msgspec.structs.replace(doc, players=players, bots=bots, revision=position)
    if isinstance(data, PlayerWithdrawn):
        if data.name in doc.withdrawn:
            return None
        return msgspec.structs.replace(
            doc, withdrawn=(*doc.withdrawn, data.name), revision=position
        )
    if isinstance(data, RoundStarted):
        tables = tuple(LiveTable(t.table, t.game_id, t.players) for t in data.tables)
        live = LiveRound(data.round, tables, data.byes)
        return msgspec.structs.replace(doc, live=live, revision=position)
    if isinstance(data, RoundClosed):
        closed = ClosedRound(
            round=data.round,
            results=data.results,
            byes=data.byes,
            bye_score=data.bye_score,
            registered=len(doc.players),
            withdrawn=doc.withdrawn,
            revision=position,
            scores=_round_scores(data.results, docs) if doc.duplicate else (),
        )
        still = doc.live if doc.live is not None and doc.live.round != data.round else None
        return msgspec.structs.replace(
            doc, closed=(*doc.closed, closed), live=still, revision=position
        )
    assert isinstance(data, TournamentEnded)
    return msgspec.structs.replace(doc, ended=True, revision=position)


def _round_scores(
    results: Sequence[TableResult], docs: Mapping[str, Doc | None]
) -> tuple[tuple[tuple[int, ...], ...], ...]:
    """Each table's hand scores, from its game's doc (its events precede `round.closed`
    in the feed, so the doc holds every hand)."""
    tables = []
    for result in results:
        doc = docs.get(game_key(result.game_id))
        history = () if doc is None else _load(doc, TableGame).history
        tables.append(hand_scores(history))
    return tuple(tables)


def _game(data: Any, event: RecordedEvent, doc: TableGame | None) -> TableGame | None:
    position = event.global_position
    if isinstance(data, GameCreated):
        if not data.tournament:
            return None  # a casual game: not this projection's
        return TableGame(data.tournament, data.round, data.table, data.seats, revision=position)
    if doc is None:
        return None
    if isinstance(data, GameStarted):
        return msgspec.structs.replace(doc, phase="playing", revision=position)
    if isinstance(data, HandEnded):
        return msgspec.structs.replace(
            doc,
            totals=data.totals,
            hands=doc.hands + 1,
            history=(*doc.history, data.totals),
            revision=position,
        )
    if isinstance(data, SeatResigned):
        if data.seat in doc.resigned:
            return None
        resigned = tuple(sorted((*doc.resigned, data.seat)))
        return msgspec.structs.replace(doc, resigned=resigned, revision=position)
    assert isinstance(data, GameEnded)
    return msgspec.structs.replace(
        doc, phase="ended", totals=data.totals, winners=data.winners, revision=position
    )


# ---- reading: what the documents answer (pure) ---------------------------------------------


def load_tournament(doc: Doc) -> Tournament:
    return msgspec.convert(doc, Tournament)


def live_keys(tournament: Tournament) -> list[str]:
    """The `game:` docs the live standings read besides the tournament's own."""
    live = tournament.live
    return [] if live is None else [game_key(t.game_id) for t in live.tables]


def live_tables(
    tournament: Tournament, games: Sequence[Doc | None]
) -> list[tuple[TableResult, str]]:
    """The live round's games as they stand, in table order, each with its phase (a game not
    in the projection yet stands at zero, `waiting`).

    In a duplicate round a hand that has ended at one table is still to come at another, and
    its scores tell something of the cards there. So while any table plays, every table is
    shown as it stood after the fewest hands any table still playing has ended: the same
    horizon the duplicate gate gives a game's readers who are not seated in it
    (service/tournaments/duplicate.py)."""
    live = tournament.live
    if live is None:
        return []
    loaded = [None if doc is None else _load(doc, TableGame) for doc in games]
    horizon = _duplicate_horizon(tournament, loaded)
    tables = []
    for table, game in zip(live.tables, loaded, strict=True):
        seats = len(table.players)
        hands = 0 if game is None else game.hands
        totals = game.totals if game is not None and game.totals else (0,) * seats
        phase = "waiting" if game is None else game.phase
        winners = game.winners if game is not None and phase == "ended" else ()
        if game is not None and horizon is not None and hands > horizon:
            hands = horizon
            totals = game.history[horizon - 1] if horizon else (0,) * seats
            phase, winners = "playing", ()
        result = TableResult(
            table=table.table,
            game_id=table.game_id,
            players=table.players,
            totals=totals,
            hands=hands,
            winners=winners,
            resigned=() if game is None else game.resigned,
        )
        tables.append((result, phase))
    return tables


def _duplicate_horizon(tournament: Tournament, games: Sequence[TableGame | None]) -> int | None:
    """How many hands of a live duplicate round may be shown (None: all of them)."""
    if not tournament.duplicate:
        return None
    playing = [0 if game is None else game.hands for game in games]
    playing = [
        hands for hands, game in zip(playing, games, strict=True)
        if game is None or game.phase != "ended"
    ]  # fmt: skip
    return min(playing) if playing else None


def closed_round(tournament: Tournament, number: int) -> ClosedRound | None:
    return next((c for c in tournament.closed if c.round == number), None)


def revision(tournament: Tournament, games: Sequence[Doc | None]) -> int:
    return max([tournament.revision, *(int(d["revision"]) for d in games if d is not None)])


def now(tournament: Tournament, games: Sequence[Doc | None]) -> list[Row]:
    """The standings now: every closed round, and the live round's games as they stand."""
    rounds = [round_result(closed) for closed in tournament.closed]
    live = tournament.live
    if live is not None:
        tables = tuple(result for result, _ in live_tables(tournament, games))
        rounds.append(round_result(ClosedRound(live.round, tables, (), 0, 0, (), 0)))
    return standings(tournament.players, rounds, tournament.high_wins, tournament.withdrawn)


def as_of(tournament: Tournament, number: int) -> list[Row]:
    """The standings as they were when round `number` closed: rounds 1..number alone, over
    the players registered then. `number` must be a closed round."""
    closed = [c for c in tournament.closed if c.round <= number]
    last = closed_round(tournament, number)
    assert last is not None, f"round {number} is not closed"
    return standings(
        tournament.players[: last.registered],
        [round_result(c) for c in closed],
        tournament.high_wins,
        last.withdrawn,
    )
