"""Matchpoints from the standings read model (projections/standings.py): each duplicate
round's boards (hand, seat position) with every table's result on it, the travellers, and
the matchpoint standings now and as of a closed round. Pure reading of the stored documents,
computed by domain/tournament/matchpoints.py, as the tournament audit computes them from the
games' own events.

A closed round's boards come from the hand scores its `round.closed` kept (`ClosedRound.
scores`). A live round's come from its games' docs, as far as `live_tables` shows them: in a
duplicate round, through the fewest hands any table still playing has ended, so no board is
shown while a table still has its cards to play (the duplicate gate's horizon,
service/tournaments/duplicate.py).
"""

from __future__ import annotations

from collections.abc import Sequence

import msgspec

from domain.tournament import matchpoints as mp
from domain.tournament.matchpoints import Board, MatchpointRow, TableHands
from projections.base import Doc
from projections.standings import (
    ClosedRound,
    TableGame,
    Tournament,
    closed_round,
    live_tables,
)


def closed_tables(closed: ClosedRound) -> list[TableHands]:
    """The tables of a closed round with their hand scores (none kept: no hand)."""
    scores = closed.scores or ((),) * len(closed.results)
    return [
        TableHands(result.table, result.game_id, result.players, hands)
        for result, hands in zip(closed.results, scores, strict=True)
    ]


def live_hands(tournament: Tournament, games: Sequence[Doc | None]) -> list[TableHands]:
    """The live round's tables with the hands `live_tables` shows of each."""
    tables = []
    for (result, _), doc in zip(live_tables(tournament, games), games, strict=True):
        history = () if doc is None else msgspec.convert(doc, TableGame).history
        hands = mp.hand_scores(history[: result.hands])
        tables.append(TableHands(result.table, result.game_id, result.players, hands))
    return tables


def round_boards(
    tournament: Tournament, number: int, games: Sequence[Doc | None]
) -> list[Board] | None:
    """Every board of round `number` shown now (None: the round has not started); `games`
    are the live round's docs (`live_keys`)."""
    closed = closed_round(tournament, number)
    if closed is not None:
        tables = closed_tables(closed)
    elif tournament.live is not None and tournament.live.round == number:
        tables = live_hands(tournament, games)
    else:
        return None
    return mp.travellers(number, tables, tournament.high_wins)


def now(tournament: Tournament, games: Sequence[Doc | None]) -> list[MatchpointRow]:
    """The matchpoint standings now: every closed round, and the live round's boards shown
    (its byes count once it closes, as in the totals' standings)."""
    boards: list[Board] = []
    byes: list[str] = []
    for closed in tournament.closed:
        boards += mp.travellers(closed.round, closed_tables(closed), tournament.high_wins)
        byes += closed.byes
    live = tournament.live
    if live is not None:
        boards += mp.travellers(live.round, live_hands(tournament, games), tournament.high_wins)
    return mp.standings(tournament.players, boards, byes, tournament.withdrawn)


def as_of(tournament: Tournament, number: int) -> list[MatchpointRow]:
    """The matchpoint standings when round `number` closed (a closed round)."""
    closed = [c for c in tournament.closed if c.round <= number]
    last = closed_round(tournament, number)
    assert last is not None, f"round {number} is not closed"
    boards = [
        board
        for c in closed
        for board in mp.travellers(c.round, closed_tables(c), tournament.high_wins)
    ]
    byes = [player for c in closed for player in c.byes]
    return mp.standings(tournament.players[: last.registered], boards, byes, last.withdrawn)
