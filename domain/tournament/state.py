"""A tournament as its own stream tells it: folded from its events by `evolve`, pure.

Everything the organiser's commands are decided against lives here: who registered and who
withdrew, each player's seed, each round's tables and byes, and the results of the rounds
that closed (what the standings and the next seating are computed from).
"""

from __future__ import annotations

import unicodedata
from collections.abc import Iterable, Sequence
from typing import Any, Protocol

import msgspec

from domain.seed_chain import SeedChain
from domain.tournament.standings import RoundResult, Seat
from events.schema.tournament import (
    PlayerRegistered,
    PlayerSeedSet,
    PlayerWithdrawn,
    RoundClosed,
    RoundStarted,
    TableResult,
    TournamentCreated,
    TournamentEnded,
)


class Player(msgspec.Struct, frozen=True):
    name: str
    token_hash: str
    seed: str | None = None
    """The seed the player set for the rounds started from now on (None: their name)."""
    withdrawn: bool = False
    bot: str = ""
    """A bot player's level ("" for a person): its seats are bot seats."""


class Round(msgspec.Struct, frozen=True):
    started: RoundStarted
    closed: RoundClosed | None = None

    @property
    def number(self) -> int:
        return self.started.round


class Tournament(msgspec.Struct, frozen=True):
    """The state before `tournament.created` has `created` None."""

    created: TournamentCreated | None = None
    players: tuple[Player, ...] = ()
    """In registration order."""
    rounds: tuple[Round, ...] = ()
    ended: bool = False

    @property
    def config(self) -> TournamentCreated:
        if self.created is None:
            raise ValueError("the tournament has not been created")
        return self.created

    def player(self, name: str) -> Player | None:
        """The player of that name, names compared in Unicode's composed form (NFC): "Zoé"
        is one name however its accent was typed."""
        wanted = unicodedata.normalize("NFC", name)
        return next(
            (p for p in self.players if unicodedata.normalize("NFC", p.name) == wanted), None
        )

    def active(self) -> tuple[str, ...]:
        """Registered and not withdrawn, by name: who is seated in the next round."""
        return tuple(sorted(p.name for p in self.players if not p.withdrawn))

    def withdrawn(self) -> tuple[str, ...]:
        return tuple(p.name for p in self.players if p.withdrawn)

    @property
    def open_round(self) -> Round | None:
        """The round in play: started and not closed."""
        last = self.rounds[-1] if self.rounds else None
        return last if last is not None and last.closed is None else None

    @property
    def next_round(self) -> int:
        return len(self.rounds) + 1

    def chain(self) -> SeedChain:
        """The tournament's seed chain over its rounds (the secret only where it is known)."""
        config = self.config
        return SeedChain(1, config.rounds, config.seed_anchor, config.seed_secret)

    def results(self, up_to: int | None = None) -> list[RoundResult]:
        """What each closed round adds to the standings (rounds 1..`up_to`)."""
        return [
            round_result(r.closed)
            for r in self.rounds
            if r.closed is not None and (up_to is None or r.number <= up_to)
        ]

    def byes_so_far(self) -> dict[str, int]:
        counts = {p.name: 0 for p in self.players}
        for played in self.rounds:
            for name in played.started.byes:
                counts[name] = counts.get(name, 0) + 1
        return counts

    def tables_of(self, name: str) -> list[tuple[str, int]]:
        """The games `name` sits at in the open round, as (game id, seat)."""
        current = self.open_round
        if current is None:
            return []
        return [
            (table.game_id, table.players.index(name))
            for table in current.started.tables
            if name in table.players
        ]


class ClosedResults(Protocol):
    """What a closed round tells: `round.closed`, or a read model's copy of it."""

    @property
    def round(self) -> int: ...
    @property
    def results(self) -> Sequence[TableResult]: ...
    @property
    def byes(self) -> tuple[str, ...]: ...
    @property
    def bye_score(self) -> int: ...


def round_result(closed: ClosedResults) -> RoundResult:
    """A closed round as the standings count it: a resigned seat never wins its game."""
    seats = tuple(
        Seat(
            player=player,
            total=result.totals[seat],
            hands=result.hands,
            won=seat in result.winners and seat not in result.resigned,
        )
        for result in closed.results
        for seat, player in enumerate(result.players)
    )
    return RoundResult(closed.round, seats, closed.byes, closed.bye_score)


def evolve(state: Tournament, event: Any) -> Tournament:
    """Fold one event of the tournament's stream."""
    replace = msgspec.structs.replace
    if isinstance(event, TournamentCreated):
        return replace(state, created=event)
    if isinstance(event, PlayerRegistered):
        return replace(
            state, players=(*state.players, Player(event.name, event.token_hash, bot=event.bot))
        )
    if isinstance(event, PlayerWithdrawn):
        return _with_player(state, event.name, withdrawn=True)
    if isinstance(event, PlayerSeedSet):
        return _with_player(state, event.name, seed=event.seed)
    if isinstance(event, RoundStarted):
        return replace(state, rounds=(*state.rounds, Round(event)))
    if isinstance(event, RoundClosed):
        rounds = tuple(
            replace(r, closed=event) if r.number == event.round else r for r in state.rounds
        )
        return replace(state, rounds=rounds)
    if isinstance(event, TournamentEnded):
        return replace(state, ended=True)
    raise ValueError(f"not a tournament event: {type(event).__name__}")


def fold(events: Iterable[Any]) -> Tournament:
    state = Tournament()
    for event in events:
        state = evolve(state, event)
    return state


def _with_player(state: Tournament, name: str, **changes: Any) -> Tournament:
    players = tuple(
        msgspec.structs.replace(p, **changes) if p.name == name else p for p in state.players
    )
    return msgspec.structs.replace(state, players=players)
