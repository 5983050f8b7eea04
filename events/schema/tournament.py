"""Events of a tournament's own stream (`tournament:<id>`): everything its organiser does,
every player who comes and goes, each round's tables and results.

A tournament's games are ordinary games (`game:<id>` streams) whose `game.created` names
the tournament, round and table; their play is never copied here. A round's results are
written here once, when its last game has ended, so the tournament's stream alone tells
its standings (domain/tournament/standings.py) and the seating of the next round.
"""

from __future__ import annotations

import msgspec

from events.schema.common import GameOptions


class TournamentCreated(msgspec.Struct, frozen=True, tag="tournament.created"):
    """An organiser opened a tournament. `organiser_hash` is SHA-256 of their token."""

    name: str
    variant: str
    options: GameOptions
    table_size: int
    rounds: int
    seating: str
    """How rounds after the first are seated: `swiss` (by standings) or `rotation` (the
    fixed rotation meeting as many different opponents as possible). Round 1 is random."""
    duplicate: bool
    """Whether every table of a round plays the same deals (duplicate deals)."""
    organiser_hash: str
    seed_anchor: str
    """x_0 of the tournament's seed chain over its rounds: round r's server seed x_r
    satisfies SHA-256(x_r) = x_(r-1), committed here before any player registered. Round
    r's random seating and (duplicate) its deals' seed chain derive from x_r
    (docs/TOURNAMENTS.md)."""
    seed_secret: str = ""
    """x_R (hex): secret until the tournament ends."""
    bye_rule: str = "round-mean"
    """How a bye scores (docs/TOURNAMENTS.md): `round-mean`, the mean seat total of the
    round's games, rounded half away from zero."""
    scoring: str = "total"
    """How the standings rank (docs/TOURNAMENTS.md, "Scoring"): `total`, by the sum of the
    seat totals; `matchpoints` (duplicate deals only), by each result compared with those
    who held the same cards (domain/tournament/matchpoints.py)."""
    auto_rounds: bool = False
    """Whether each round after the first starts by itself once the one before has closed
    (the round keeper starts it, as the organiser would). Round 1, which closes
    registration, is always the organiser's to start."""


class PlayerRegistered(msgspec.Struct, frozen=True, tag="player.registered"):
    """A player entered. `token_hash` is SHA-256 of the player's token, which seats them in
    every game of theirs in the tournament. Names are unique within a tournament.

    A bot player (`bot` names its level: `random`, `greedy`, `strong`; domain.variants
    BOT_KINDS) was entered by the organiser and has no token (`token_hash` ""): each of its
    seats is claimed as a bot seat (`seat.claimed` with the same `bot`), which the
    service's bot runner plays and no client can act for."""

    name: str
    token_hash: str
    bot: str = ""


class PlayerWithdrawn(msgspec.Struct, frozen=True, tag="player.withdrawn"):
    """A player left (by the organiser, or by themselves). Not seated in later rounds;
    their seats in games still in play are played out by the bot (`seat.resigned`)."""

    name: str
    round: int
    """The round in play when they withdrew (0: none was)."""


class PlayerSeedSet(msgspec.Struct, frozen=True, tag="player.seed_set"):
    """A player chose their seed for the rounds started from now on (public). Every
    registered player's seed (or name, if they set none) goes into each round's seat seed,
    so no single party controls a duplicate round's deals."""

    name: str
    seed: str


class TableSeats(msgspec.Struct, frozen=True):
    table: int
    """1-based."""
    game_id: str
    players: tuple[str, ...]
    """Player names in seat order."""


class RoundStarted(msgspec.Struct, frozen=True, tag="round.started"):
    """A round's games were created and seated (and started)."""

    round: int
    tables: tuple[TableSeats, ...]
    byes: tuple[str, ...] = ()
    """Players sitting this round out, because the players do not divide into tables."""
    seat_seed: str = ""
    """Duplicate deals: the seat seed every seat of every table deals with, SHA-256 over
    the round number and each registered player's seed (docs/TOURNAMENTS.md)."""
    seat_seeds_from: tuple[tuple[str, str], ...] = ()
    """Duplicate deals: the (player, seed) pairs `seat_seed` was computed from, by name."""


class TableResult(msgspec.Struct, frozen=True):
    """One table's game as it ended."""

    table: int
    game_id: str
    players: tuple[str, ...]
    """Player names in seat order."""
    totals: tuple[int, ...]
    """Each seat's final total, in seat order."""
    hands: int
    """Hands completed."""
    winners: tuple[int, ...]
    """Winning seats, as the game ended (`game.ended`)."""
    resigned: tuple[int, ...] = ()
    """Seats that resigned or were withdrawn: they score as the bot played them out, and
    never count as winning the game."""


class RoundClosed(msgspec.Struct, frozen=True, tag="round.closed"):
    """Every game of the round has ended: their results, and the round's seed revealed."""

    round: int
    results: tuple[TableResult, ...]
    byes: tuple[str, ...] = ()
    bye_score: int = 0
    """What each bye scores this round (see `TournamentCreated.bye_rule`)."""
    server_seed: str = ""
    """x_r, the round's link of the tournament's seed chain (hex)."""


class TournamentEnded(msgspec.Struct, frozen=True, tag="tournament.ended"):
    """The last round closed (or the organiser ended the tournament early)."""

    rounds_played: int


EVENTS: tuple[type, ...] = (
    TournamentCreated,
    PlayerRegistered,
    PlayerWithdrawn,
    PlayerSeedSet,
    RoundStarted,
    RoundClosed,
    TournamentEnded,
)
