"""The oracle of matchpoints: a duplicate tournament's travellers and matchpoint standings
recomputed straight from its events (each game's `hand.ended` scores, the tournament's
rounds), by code that shares nothing with projections/boards.py but the matchpoint functions
of the domain. A live round is shown through the fewest hands a table still playing has ended,
as the duplicate gate shows it."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from domain.tournament import matchpoints as mp
from domain.variants import high_wins
from events.schema.common import GameEnded, HandEnded
from events.schema.tournament import (
    PlayerRegistered,
    PlayerWithdrawn,
    RoundClosed,
    RoundStarted,
    TournamentCreated,
)

Entry = tuple[str, Any]


class _Reading:
    def __init__(self) -> None:
        self.registered: list[str] = []
        self.withdrawn: list[str] = []
        self.byes: list[str] = []
        self.started: dict[int, RoundStarted] = {}
        self.closed: list[int] = []
        self.scores: dict[str, list[tuple[int, ...]]] = {}
        self.ended: set[str] = set()


def _read(history: Sequence[Entry], as_of: int | None) -> tuple[_Reading, bool]:
    created = next(e for _, e in history if isinstance(e, TournamentCreated))
    seen = _Reading()
    for stream, event in history:
        gid = stream.removeprefix("game:")
        if isinstance(event, PlayerRegistered):
            seen.registered.append(event.name)
        elif isinstance(event, PlayerWithdrawn):
            seen.withdrawn.append(event.name)
        elif isinstance(event, RoundStarted):
            seen.started[event.round] = event
        elif isinstance(event, HandEnded):
            seen.scores.setdefault(gid, []).append(event.scores)
        elif isinstance(event, GameEnded):
            seen.ended.add(gid)
        elif isinstance(event, RoundClosed):
            seen.closed.append(event.round)
            seen.byes += event.byes
            if as_of == event.round:
                break
    return seen, high_wins(created.variant)


def _tables(seen: _Reading, number: int) -> list[mp.TableHands]:
    started = seen.started[number]
    hands = {t.game_id: seen.scores.get(t.game_id, []) for t in started.tables}
    if number not in seen.closed:
        playing = [len(hands[t.game_id]) for t in started.tables if t.game_id not in seen.ended]
        if playing:
            hands = {gid: scores[: min(playing)] for gid, scores in hands.items()}
    return [
        mp.TableHands(t.table, t.game_id, t.players, tuple(hands[t.game_id]))
        for t in started.tables
    ]


def expected_travellers(history: Sequence[Entry], number: int) -> list[mp.Board]:
    """Round `number`'s boards as the events show them now."""
    seen, high = _read(history, None)
    return mp.travellers(number, _tables(seen, number), high)


def expected_matchpoints(
    history: Sequence[Entry], as_of: int | None = None
) -> list[mp.MatchpointRow]:
    """The matchpoint standings now (closed rounds, and the live round's boards shown), or
    as of closed round `as_of` (over the players registered and withdrawn then)."""
    seen, high = _read(history, as_of)
    rounds = [n for n in seen.started if as_of is None or n in seen.closed]
    boards = [board for n in rounds for board in mp.travellers(n, _tables(seen, n), high)]
    return mp.standings(seen.registered, boards, seen.byes, seen.withdrawn)
