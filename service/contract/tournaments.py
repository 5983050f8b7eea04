"""The request and response bodies of /tournaments (OpenAPI components).

No body here ever carries a token's hash; the organiser's and players' tokens appear once,
in the answer that made them. A tournament's seed secret is shown once it has ended.
"""

from __future__ import annotations

from typing import Annotated, Literal

import msgspec

from events.schema.common import GameOptions
from events.schema.tournament import TableResult
from service.contract.names import shown
from service.contract.public import Seating, TournamentEvent, Variant
from service.contract.schemas import Name, SeatSeedText

TournamentName = Annotated[
    str, msgspec.Meta(min_length=1, max_length=80, pattern=Name.__metadata__[0].pattern)
]
BotLevel = Annotated[
    str,
    msgspec.Meta(
        min_length=1,
        max_length=20,
        description="A bot's level: `random`, `greedy` or `strong` (an unknown one is 422 "
        "`unknown_bot_level`, naming the levels)",
    ),
]
Scoring = Literal["total", "matchpoints"]
Phase = Literal["registering", "in_play", "between_rounds", "ended"]
"""`registering` until round 1 starts; `in_play` while a round is; `between_rounds` once it
has closed and before the next starts; `ended` after the last round closed."""


class CreateTournament(msgspec.Struct, forbid_unknown_fields=True):
    """Open a tournament: its game, table size, rounds and seating (docs/TOURNAMENTS.md)."""

    name: TournamentName
    variant: Variant
    table_size: Annotated[int, msgspec.Meta(ge=2, le=10)]
    """Players at every table (within the variant's player range)."""
    rounds: Annotated[int, msgspec.Meta(ge=1, le=50)]
    seating: Seating = "swiss"
    """How rounds after the first are seated; round 1 is random."""
    duplicate: bool = False
    """Whether every table of a round plays the same deals."""
    scoring: Scoring = "total"
    """How the standings rank: `total` (the sum of seat totals) or `matchpoints` (each
    result compared with the other tables' on the same cards; needs `duplicate`, else 422
    `invalid_config`). docs/TOURNAMENTS.md, "Scoring"."""
    options: GameOptions | None = None
    """The variant's house options, for every game of the tournament."""
    auto_rounds: bool = False
    """Whether each round after the first starts by itself once the one before has closed;
    round 1 (which closes registration) is always the organiser's to start."""

    def __post_init__(self) -> None:
        self.name = shown(self.name)


class RegisterPlayer(msgspec.Struct, forbid_unknown_fields=True):
    name: Name
    """Unique within the tournament (compared in Unicode's composed form, NFC, as it is
    stored); seats the player under this name in every game."""

    bot: BotLevel | None = None
    """A bot player's level (`random`, `greedy`, `strong`): the service plays its seats,
    and no token is issued for it. Absent: a person."""

    def __post_init__(self) -> None:
        self.name = shown(self.name)


class SetPlayerSeed(msgspec.Struct, forbid_unknown_fields=True):
    """The player's seed for the duplicate rounds started from now on (public)."""

    seed: SeatSeedText


class TournamentOpened(msgspec.Struct):
    tournament_id: str
    organiser_token: str
    """Secret: send it as `Authorization: Bearer <token>` to register players and start
    rounds."""
    version: int
    name: str
    variant: str


class PlayerAdded(msgspec.Struct):
    tournament_id: str
    name: str
    token: str | None
    """Secret: the player's token, which acts in every game of theirs in the tournament;
    null for a bot player (no client acts for it)."""
    version: int
    bot: str | None = None
    """A bot player's level; null for a person."""


class PlayerLeft(msgspec.Struct):
    tournament_id: str
    name: str
    round: int
    """The round in play when they withdrew (0: none was)."""
    resigned_games: list[str]
    """Their games still in play, now played out by the service (`seat.resigned`)."""
    version: int


class PlayerSeedRecorded(msgspec.Struct):
    tournament_id: str
    name: str
    seed: str
    version: int


class PlayerInfo(msgspec.Struct):
    name: str
    withdrawn: bool
    seed: str | None
    """The seed set for the coming rounds (public), None: the name stands in."""
    bot: str | None = None
    """A bot player's level (its seats are bot seats); null for a person."""


class TableInfo(msgspec.Struct):
    table: int
    game_id: str
    players: list[str]
    """In seat order."""


class RoundInfo(msgspec.Struct):
    round: int
    state: Literal["in_play", "closed"]
    tables: list[TableInfo]
    byes: list[str]
    seat_seed: str | None
    """Duplicate rounds: the one seat seed of every seat (docs/TOURNAMENTS.md)."""
    results: list[TableResult] | None = None
    """Once closed: each table's game as it ended."""
    bye_score: int | None = None
    """Once closed: what each bye scores."""
    server_seed: str | None = None
    """Once closed: x_r, the round's link of the tournament's seed chain."""


class TournamentInfo(msgspec.Struct):
    tournament_id: str
    name: str
    variant: str
    options: GameOptions
    table_size: int
    rounds: int
    """Rounds planned."""
    seating: str
    duplicate: bool
    bye_rule: str
    scoring: Scoring
    auto_rounds: bool
    """Rounds after the first start by themselves."""
    phase: Phase
    players: list[PlayerInfo]
    """In registration order."""
    played: list[RoundInfo]
    """Each round started so far, in order."""
    seed_anchor: str
    """x_0 of the seed chain over the rounds, committed at creation."""
    seed_secret: str | None
    """x_R, shown once the tournament has ended."""
    version: int


class TournamentEntry(msgspec.Struct):
    version: int
    event: TournamentEvent
    """The event in its public shape: never a token's hash, and the seed secret null until
    the tournament has ended."""


class TournamentFeed(msgspec.Struct):
    tournament_id: str
    version: int
    events: list[TournamentEntry]
    has_more: bool = False
    next_after: int | None = None
