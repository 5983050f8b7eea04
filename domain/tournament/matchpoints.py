"""Matchpoints: each result compared only with the results of those who held the same cards.

In a duplicate round every table is dealt the same cards, hand by hand, seat position by
seat position (docs/TOURNAMENTS.md, "Fair seating and duplicate deals"). So hand h, seat s is
one *board*: the same cards held at every table that played it, and a player's score there
is compared with every other table's score on that board alone, as duplicate bridge does:

- 2 matchpoints for each other result it beats, 1 for each it ties, 0 for each that beats it.
  Beats means lower for the Golf family, higher for Basketball (`high_wins`).
- With n results on the board, each result's top is 2(n - 1): its percentage is its
  matchpoints over its top. Each pair of results shares 2 matchpoints, so a board's
  matchpoints add up to n(n - 1), half of the n tops: the points of a deal sum to the points
  available, whoever played.
- A board only one table played compares nothing: it has no top, earns nothing and is left
  out of every percentage (a table that ended before the others' last hands leaves such
  boards in a game with no fixed number of hands).
- A player's percentage is the mean of their results' percentages over every board they
  played and that compared something: a bye plays no board and moves it neither way, a
  withdrawn player keeps the boards their seat earned while the greedy bot played it out.
- Standings: the higher percentage first; then more matchpoints in all (more boards played
  to the same percentage); players equal on both share a rank ("1224"), listed by name.
  A player who has played no board yet ranks behind every percentage.

Pure: the projection, the tournament audit and the tests all compute with these functions.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from fractions import Fraction

import msgspec


def top(results: int) -> int:
    """The matchpoints one result earns by beating every other of `results` on its board."""
    return 2 * (results - 1) if results > 1 else 0


def board(scores: Mapping[int, int], high_wins: bool) -> dict[int, int]:
    """The matchpoints of each result of one board: `scores` by table, in table order."""
    earned = {}
    for table, score in scores.items():
        points = 0
        for other, theirs in scores.items():
            if other == table:
                continue
            if score == theirs:
                points += 1
            elif (score > theirs) == high_wins:
                points += 2
        earned[table] = points
    return earned


def hand_scores(history: Sequence[Sequence[int]]) -> tuple[tuple[int, ...], ...]:
    """Each hand's scores by seat, from the totals after each hand (a hand's totals add its
    scores to the last: domain/grid/decide.py, domain/shedding/decide.py)."""
    before: Sequence[int] = (0,) * (len(history[0]) if history else 0)
    scores = []
    for totals in history:
        scores.append(tuple(now - then for now, then in zip(totals, before, strict=True)))
        before = totals
    return tuple(scores)


class TableHands(msgspec.Struct, frozen=True):
    """One table of a duplicate round as the boards need it: who sat where, and each
    ended hand's scores by seat (`scores[h - 1]` for hand h)."""

    table: int
    game_id: str
    players: tuple[str, ...]
    scores: tuple[tuple[int, ...], ...]


class BoardResult(msgspec.Struct, frozen=True):
    """One table's result on a board (one line of its traveller)."""

    table: int
    game_id: str
    player: str
    score: int
    matchpoints: int
    top: int
    percent: float | None
    """matchpoints / top x 100, rounded to 2 places; None when nothing was compared."""


class Board(msgspec.Struct, frozen=True):
    """Hand `hand`, seat position `seat` of round `round`: every table's result."""

    round: int
    hand: int
    seat: int
    entries: tuple[BoardResult, ...]


def _percent(points: int, most: int) -> float | None:
    return round(float(Fraction(100 * points, most)), 2) if most else None


def travellers(round_: int, tables: Sequence[TableHands], high_wins: bool) -> list[Board]:
    """Every board of the round, by hand then seat position, from the tables' hands."""
    hands = max((len(t.scores) for t in tables), default=0)
    seats = max((len(t.players) for t in tables), default=0)
    out = []
    for hand in range(1, hands + 1):
        for seat in range(seats):
            played = [t for t in tables if len(t.scores) >= hand and seat < len(t.players)]
            scores = {t.table: t.scores[hand - 1][seat] for t in played}
            earned = board(scores, high_wins)
            most = top(len(played))
            entries = tuple(
                BoardResult(
                    t.table,
                    t.game_id,
                    t.players[seat],
                    scores[t.table],
                    earned[t.table],
                    most,
                    _percent(earned[t.table], most),
                )
                for t in played
            )
            out.append(Board(round_, hand, seat, entries))
    return out


class MatchpointRow(msgspec.Struct, frozen=True):
    rank: int
    player: str
    percent: float | None
    """The mean of the player's board percentages, rounded to 2 places (None: no board)."""
    matchpoints: int
    top: int
    """The tops of the boards counted: `matchpoints` of `top`."""
    boards: int
    """Boards played that compared something."""
    byes: int = 0
    withdrawn: bool = False


def standings(
    players: Sequence[str],
    boards: Iterable[Board],
    byes: Iterable[str] = (),
    withdrawn: Iterable[str] = (),
) -> list[MatchpointRow]:
    """Every registered player (in `players`) ranked by their percentage over `boards`;
    `byes` names a player once per round they sat out."""
    shares: dict[str, list[Fraction]] = {player: [] for player in players}
    points = dict.fromkeys(players, 0)
    tops = dict.fromkeys(players, 0)
    for traveller in boards:
        for entry in traveller.entries:
            if not entry.top:
                continue
            shares.setdefault(entry.player, []).append(Fraction(entry.matchpoints, entry.top))
            points[entry.player] = points.get(entry.player, 0) + entry.matchpoints
            tops[entry.player] = tops.get(entry.player, 0) + entry.top
    sat_out: dict[str, int] = {}
    for player in byes:
        sat_out[player] = sat_out.get(player, 0) + 1
        shares.setdefault(player, [])
    gone = set(withdrawn)

    def mean(player: str) -> Fraction | None:
        mine = shares[player]
        return sum(mine, Fraction(0)) / len(mine) if mine else None

    def key(player: str) -> tuple[int, Fraction, int]:
        average = mean(player)
        return (average is None, -(average or Fraction(0)), -points.get(player, 0))

    ordered = sorted(shares, key=lambda player: (key(player), player))
    rows, previous, rank = [], None, 0
    for position, player in enumerate(ordered, start=1):
        current = key(player)
        if current != previous:
            rank, previous = position, current
        average = mean(player)
        rows.append(
            MatchpointRow(
                rank=rank,
                player=player,
                percent=None if average is None else round(float(100 * average), 2),
                matchpoints=points.get(player, 0),
                top=tops.get(player, 0),
                boards=len(shares[player]),
                byes=sat_out.get(player, 0),
                withdrawn=player in gone,
            )
        )
    return rows
