"""Standings: who leads a tournament, from its round results alone. Pure.

One function serves the standings projection, the tournament's Swiss seating and every
test that recomputes standings from the events, so they cannot disagree.

The rules (docs/TOURNAMENTS.md, "Standings"):
- A player's total is the sum of their seat totals over the games they played, plus the
  bye score of each round they sat out. A resigned or withdrawn seat's total is what the
  bot scored playing it out; such a game never counts as won.
- Games counts games played and byes; hands counts hands played (a bye plays none);
  the average per hand is total of played games / hands (byes excluded), None before any.
- Order: the better total first (lower for the Golf family, higher for Basketball); then
  the better average per hand; then more games won; players equal on all three share a
  rank ("1224" ranking) and are listed by name.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from fractions import Fraction

import msgspec


class Seat(msgspec.Struct, frozen=True):
    """One player's part in one game: what `TableResult` says of one seat, or of a game
    still in play (then `won` is False and `hands` counts the hands ended so far)."""

    player: str
    total: int
    hands: int
    won: bool = False


class RoundResult(msgspec.Struct, frozen=True):
    """What one round adds to the standings: each seat of each game, and the byes."""

    round: int
    seats: tuple[Seat, ...]
    byes: tuple[str, ...] = ()
    bye_score: int = 0


class Row(msgspec.Struct, frozen=True):
    rank: int
    player: str
    total: int
    games: int
    hands: int
    won: int
    average: float | None
    """Total of the games played per hand played (byes excluded), rounded to 3 places."""
    byes: int = 0
    withdrawn: bool = False


class _Tally:
    __slots__ = ("byes", "games", "hands", "played_total", "total", "won")

    def __init__(self) -> None:
        self.total = self.played_total = self.games = self.hands = self.won = self.byes = 0

    def average(self) -> Fraction | None:
        return Fraction(self.played_total, self.hands) if self.hands else None


def standings(
    players: Sequence[str],
    rounds: Iterable[RoundResult],
    high_wins: bool,
    withdrawn: Iterable[str] = (),
) -> list[Row]:
    """Every registered player (in `players`), ranked by the results of `rounds`."""
    tallies = {player: _Tally() for player in players}
    for result in rounds:
        for seat in result.seats:
            tally = tallies.setdefault(seat.player, _Tally())
            tally.total += seat.total
            tally.played_total += seat.total
            tally.games += 1
            tally.hands += seat.hands
            tally.won += seat.won
        for player in result.byes:
            tally = tallies.setdefault(player, _Tally())
            tally.total += result.bye_score
            tally.games += 1
            tally.byes += 1
    sign = -1 if high_wins else 1
    gone = set(withdrawn)

    def key(item: tuple[str, _Tally]) -> tuple[int, int, Fraction, int]:
        _, tally = item
        average = tally.average()
        # No hand played yet ranks behind any average (None sorts last either way).
        missing = 1 if average is None else 0
        return (sign * tally.total, missing, sign * (average or Fraction(0)), -tally.won)

    ordered = sorted(tallies.items(), key=lambda item: (key(item), item[0]))
    rows: list[Row] = []
    previous: tuple[int, int, Fraction, int] | None = None
    rank = 0
    for position, item in enumerate(ordered, start=1):
        current = key(item)
        if current != previous:
            rank, previous = position, current
        name, tally = item
        average = tally.average()
        rows.append(
            Row(
                rank=rank,
                player=name,
                total=tally.total,
                games=tally.games,
                hands=tally.hands,
                won=tally.won,
                average=None if average is None else round(float(average), 3),
                byes=tally.byes,
                withdrawn=name in gone,
            )
        )
    return rows


def round_mean(totals: Iterable[int]) -> int:
    """The bye score of a round: the mean of its games' seat totals, rounded half away from
    zero (0 for a round without a finished seat)."""
    values = list(totals)
    if not values:
        return 0
    mean = Fraction(sum(values), len(values))
    magnitude = int(abs(mean) + Fraction(1, 2))
    return magnitude if mean >= 0 else -magnitude
