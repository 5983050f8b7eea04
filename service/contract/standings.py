"""What the standings, round results and ratings endpoints answer
(service/http/controllers/standings.py, service/http/controllers/ratings.py).

Totals, hands, wins, names and links only: no card and no seed is in any of them.
"""

from __future__ import annotations

from typing import Literal

import msgspec
from msgspec import UNSET, UnsetType

from service.contract.public import Variant

TableStatus = Literal["waiting", "playing", "ended"]
"""`waiting`: the game has not started; `playing`: in play; `ended`: over."""
RoundStatus = Literal["playing", "closed"]
Scoring = Literal["total", "matchpoints"]


class StandingsRow(msgspec.Struct):
    rank: int
    """1-based; players equal on total, average and wins share a rank ("1224"); with
    matchpoints, on percent and matchpoints."""
    player: str
    total: int
    """Seat totals of the games played (so far, in a live round), plus each bye's score."""
    games: int
    """Games played (a live round's included) and byes."""
    hands: int
    won: int
    """Games won (never by a seat that resigned or was withdrawn)."""
    average: float | None
    """Total of the games played per hand played (byes excluded), 3 places; null before
    any hand."""
    byes: int
    withdrawn: bool
    bot: str | None = None
    """A bot player's level; null for a person."""
    percent: float | UnsetType | None = UNSET
    """Scoring `matchpoints` only (absent with `total`): the mean of the player's
    percentages over the boards they played (2 points per result beaten on a board, 1 per
    tie, over the board's top), 2 places; null before any board."""
    matchpoints: int | UnsetType = UNSET
    """Scoring `matchpoints` only: matchpoints earned over every board counted."""
    top: int | UnsetType = UNSET
    """Scoring `matchpoints` only: the sum of those boards' tops."""
    boards: int | UnsetType = UNSET
    """Scoring `matchpoints` only: boards played that compared something."""


class Standings(msgspec.Struct):
    """A tournament's standings: as of a closed round, or live (the closed rounds and the
    round in play as its games stand)."""

    tournament_id: str
    name: str
    variant: Variant
    round: int
    """The last round counted: the one asked for, else the round in play, else the last
    closed (0 before the first round)."""
    live: bool
    """Whether a round in play is counted (its games as they stand)."""
    rounds_closed: int
    """Rounds closed up to `round`."""
    rounds: int
    """Rounds planned."""
    ended: bool
    """The tournament has ended (and, live, these are its final standings)."""
    revision: int
    """Grows whenever these standings change (a feed position), the same on every
    instance and after a rebuild of the read model."""
    rows: list[StandingsRow]
    scoring: Scoring = "total"
    """What `rank` orders by: `total` (total, then average per hand, then games won) or
    `matchpoints` (percent, then matchpoints; docs/TOURNAMENTS.md, "Scoring")."""


class TableLinks(msgspec.Struct):
    game: str
    """`/games/{game_id}`."""
    export: str
    """`/games/{game_id}/export` (once the game is over)."""
    replays: list[str]
    """`/games/{game_id}/hands/{hand}/replay` of each hand ended."""


class TableLine(msgspec.Struct):
    table: int
    game_id: str
    players: list[str]
    """In seat order."""
    totals: list[int]
    """Each seat's total (so far, while the game is in play)."""
    hands: int
    """Hands ended."""
    winners: list[int]
    """Winning seats once the game is over (empty before)."""
    resigned: list[int]
    """Seats that resigned or were withdrawn: the bot played them out; they never win."""
    status: TableStatus
    links: TableLinks
    bots: list[str | None]
    """Each seat's bot level, in seat order (null: a person's seat)."""


class RoundResults(msgspec.Struct):
    """One round of a tournament, table by table."""

    tournament_id: str
    round: int
    status: RoundStatus
    tables: list[TableLine]
    byes: list[str]
    bye_score: int | None
    """What each bye scores; null until the round closes (the round's mean seat total)."""
    revision: int


class TravellerEntry(msgspec.Struct):
    """One table's result on a board."""

    table: int
    game_id: str
    player: str
    """Who held the board's cards at this table (the seat position's player)."""
    score: int
    """The seat's score for the hand."""
    matchpoints: int
    """2 per other table's result beaten, 1 per tie (lower beats higher for the Golf
    family, higher for Basketball)."""
    top: int
    """2 x (the tables that played the board - 1): the most a result can earn."""
    percent: float | None
    """matchpoints / top x 100, 2 places; null when no other table played the board."""
    replay: str
    """`/games/{game_id}/hands/{hand}/replay`: how this table played the cards."""


class Traveller(msgspec.Struct):
    """Hand `hand`, seat position `seat` of a duplicate round: every table's result with
    the same cards."""

    hand: int
    seat: int
    entries: list[TravellerEntry]


class Travellers(msgspec.Struct):
    """A duplicate round's travellers, by hand then seat: only the boards no table still
    has to play (a live round's, through the fewest hands a table still playing has ended)."""

    tournament_id: str
    round: int
    status: RoundStatus
    scoring: Scoring
    hands: int
    """Hands whose boards are shown (every table still playing has ended them)."""
    travellers: list[Traveller]
    revision: int


class Rating(msgspec.Struct):
    """A player's rating (OpenSkill Plackett-Luce) over every finished game of that name."""

    name: str
    ordinal: float
    """The displayed rating: mu - 3 sigma (a new player: 0)."""
    mu: float
    sigma: float
    games: int
    """Games rated."""
    bot: str | None = None
    """The level of the last bot that played under this name, once one has (its rating
    then stays out of `GET /ratings?bots=false`); null: only people have."""


class Leaderboard(msgspec.Struct):
    """Rated players, the best ordinal first (then by name), a page at a time."""

    ratings: list[Rating]
    next_cursor: str | None
    """Pass as `cursor` for the next page; null on the last page."""
