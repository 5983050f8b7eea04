"""The request and response bodies of the REST API (its OpenAPI components): games, seats
(a person's or a bot's), views, actions, the feed, scores, variants, replays, seat seeds and
rematches. A game's export is in export.py, receipt keys in receipts.py, the tournaments' and
standings' bodies in their own modules."""

from __future__ import annotations

from typing import TYPE_CHECKING, Annotated, Literal

import msgspec

from domain.decider import Status
from domain.grid.scoring import LayoutScore
from domain.grid.view import GridTable, GridView
from domain.shedding.scoring import RemainingScore
from domain.shedding.view import SheddingTable, SheddingView
from domain.variants import BOT_KINDS
from events.schema.common import CardText, GameOptions
from events.schema.grid import GridAction
from events.schema.shedding import SheddingAction, SheddingOption
from service.contract.names import shown
from service.contract.public import (
    PUBLIC_EVENTS,
    Event,
    HandEndReason,
    PlayedForReason,
    ResignReason,
    Variant,
)
from service.contract.receipts import Receipt

Action = GridAction | SheddingAction
View = GridView | SheddingView
"""A game as its viewer may know it, tagged by `family`: `grid` or `shedding`."""
LegalAction = GridAction | SheddingOption
"""An action a seat may take now, tagged by `type`: a grid action as it is to be posted, or
a Tens-shedding option that describes a set of actions (docs/API.md, "Legal actions")."""
OptionName = Literal["turn_limit", "hands", "grab_min", "grab_max", "turn_seconds"]
if TYPE_CHECKING:  # a checker cannot read a Literal built from a computed tuple
    EventType = str
else:
    EventType = Literal[tuple(e.__struct_config__.tag for e in PUBLIC_EVENTS)]
"""The `type` of every event of the feed."""
Score = LayoutScore | RemainingScore
"""A grid layout's score (columns and combos) or Tens-shedding's remaining cards, tagged by
`family`: `grid` or `shedding`."""

# Names and titles are shown to other players: no control characters, no bidirectional
# overrides or isolates, no invisible zero-width characters or line separators, and not only
# whitespace. `(?![\s\S])` is the end of the text: `$` would also match before a final newline.
_UNSHOWN = r"\x00-\x1f\x7f-\x9f\u061c\u200b-\u200f\u2028-\u202e\u2060\u2066-\u2069\ufeff"
_SHOWN_TEXT = rf"\s*[^\s{_UNSHOWN}][^{_UNSHOWN}]*"
Name = Annotated[
    str, msgspec.Meta(min_length=1, max_length=40, pattern=rf"^{_SHOWN_TEXT}(?![\s\S])")
]
Title = Annotated[str, msgspec.Meta(max_length=80, pattern=rf"^(?:{_SHOWN_TEXT})?(?![\s\S])")]


BotLevel = Annotated[
    str,
    msgspec.Meta(
        min_length=1,
        max_length=20,
        description=f"How the bot plays: one of {', '.join(BOT_KINDS)} (422 "
        "`unknown_bot_level` otherwise)",
    ),
]


class SeatBot(msgspec.Struct, forbid_unknown_fields=True):
    """A bot for a free seat, before the start: its level and the name it shows."""

    level: BotLevel
    name: Name | None = None
    """Shown as the seat's name; `<level> bot <seat>` when omitted."""

    def __post_init__(self) -> None:
        self.name = None if self.name is None else shown(self.name)


class BotSeat(SeatBot, kw_only=True):
    seat: Annotated[int, msgspec.Meta(ge=0, le=9)]


class CreateGame(msgspec.Struct, forbid_unknown_fields=True):
    """Open a game; all seats must be claimed before the creator starts it (a game with bot
    seats starts by itself once full)."""

    variant: Variant
    seats: Annotated[int, msgspec.Meta(ge=2, le=10)]
    options: GameOptions | None = None
    """House options; omitted fields keep the variant's rules."""
    title: Title = ""
    bots: Annotated[list[BotSeat], msgspec.Meta(max_length=10)] = msgspec.field(
        default_factory=list
    )
    """Seats a bot takes at once (the service plays them); the others are claimed. A game
    with bots starts by itself once every seat is held (at once when bots hold them all)."""

    def __post_init__(self) -> None:
        self.title = shown(self.title)


class ClaimSeat(msgspec.Struct, forbid_unknown_fields=True):
    """Take a seat: a given one, or the lowest free one when `seat` is omitted."""

    name: Name
    seat: Annotated[int, msgspec.Meta(ge=0, le=9)] | None = None

    def __post_init__(self) -> None:
        self.name = shown(self.name)


class GameOpened(msgspec.Struct):
    game_id: str
    creator_token: str
    """Secret: send it as `Authorization: Bearer <token>` to start the game."""
    version: int
    variant: Variant
    seats: int
    receipt: Receipt
    """The service's signature on the game's first event, which commits its seed chain."""


class SeatGranted(msgspec.Struct):
    game_id: str
    seat: int
    token: str
    """Secret: send it as `Authorization: Bearer <token>` to act for this seat."""
    version: int
    receipt: Receipt
    """The service's signature on the game's history up to `version` (docs/API.md)."""


class SeatInfo(msgspec.Struct):
    seat: int
    name: str | None
    bot: str | None = None
    """The level of the bot that holds the seat (`random`, `greedy`, ...); null for a
    person's seat or a free one."""


class SeatState(SeatInfo):
    """A seat as the game stands now: who holds it, whether the bot plays it, its clock."""

    resigned: ResignReason | None = None
    """Why the service's bot plays this seat now (`resigned`, `withdrawn`), null while its
    holder does (docs/TOURNAMENTS.md, "Turn clocks and resigning")."""
    turn_deadline: str | None = None
    """When the seat's time to act runs out (RFC 3339), in a game with a turn clock and
    while it is this seat's to act; null otherwise. Past it, the service plays for the seat
    with the greedy bot (`turn.played_for`)."""


class GameSummary(msgspec.Struct):
    game_id: str
    variant: Variant
    title: str
    seats: list[SeatState]
    options: GameOptions
    version: int
    started: bool
    status: Status | None
    receipt: Receipt | None = None
    """On the answers to start, release, resign and seating a bot: the service's signature
    on the game's history up to `version`; null on reads."""
    turn_deadline: str | None = None
    """The earliest `turn_deadline` of the seats to act (null without a running clock)."""
    rematch_of: str | None = None
    """The finished game this one is the rematch of; null for a first game."""
    rematch: str | None = None
    """This finished game's rematch (POST /games/{id}/rematch), null before one."""


class RematchOpened(msgspec.Struct):
    """A finished game's rematch, started: every seat's holder acts there with the token
    that held its seat here, bots play their seats again."""

    game_id: str
    rematch_of: str
    version: int
    receipt: Receipt
    """The service's signature on the rematch's history up to `version`."""


class PublicView(msgspec.Struct):
    """What a spectator may know: public facts only."""

    game_id: str
    version: int
    status: Status | None
    view: View | None
    """The variant's view for a spectator; null before the game starts."""
    seats: list[SeatState] = msgspec.field(default_factory=list)
    """Each seat's holder, whether a bot plays it, and its turn clock."""
    turn_deadline: str | None = None
    """The earliest `turn_deadline` of the seats to act (null without a running clock)."""
    rematch_of: str | None = None
    """The finished game this one is the rematch of; null for a first game."""
    rematch: str | None = None
    """This finished game's rematch, null before one."""


class SeatView(msgspec.Struct):
    """What one seat may know, with every action it may take now."""

    game_id: str
    version: int
    seat: int
    status: Status | None
    view: View | None
    """Null before the game starts."""
    legal_actions: list[LegalAction]
    """Empty when it is not this seat's to act."""


class EventMetadata(msgspec.Struct, omit_defaults=True):
    """What the service recorded beside an event (the known keys; others are not shown)."""

    seat: int | None = None
    """The seat that acted."""
    action: Action | None = None
    """The action as the seat sent it (or as the service's bot chose it for the seat)."""
    played_for: PlayedForReason | None = None
    """Set when the service played the action for the seat, and why (`turn.played_for`)."""
    bot: str | None = None
    """Set on a bot seat's move: the level of the bot that chose it."""
    idempotency_key: str | None = None
    idempotency_scope: str | None = None
    request_hash: str | None = None


class FeedEntry(msgspec.Struct):
    version: int
    event: Event
    """The event as the viewer may know it: a card or seed they may not know is null."""
    hash: str | None = None
    """Hex of the event's hash-chain link, `sha256(prev_hash || canonical bytes)`; null
    where the viewer may not know the whole event (docs/API.md, "The hash chain")."""
    prev_hash: str | None = None
    """The previous event's `hash` (64 zeros before version 1), null where that is."""
    event_id: str | None = None
    """Shown, with `recorded_at` and `metadata`, only where the viewer may know the whole
    event: its hand is over, or nothing in it is hidden from them (and only on the feed)."""
    recorded_at: str | None = None
    metadata: EventMetadata | None = None


class ActionResult(msgspec.Struct):
    """What an action did, and where it leaves the acting seat: a turn is one request."""

    game_id: str
    seat: int
    version: int
    """The game's version after the action; send it back in If-Match to act on it."""
    events: list[FeedEntry]
    """The events the action appended (with the next deal when it ended a hand)."""
    status: Status
    view: View
    """The acting seat's view after the action."""
    legal_actions: list[LegalAction]
    """What the acting seat may do next (empty when it is another seat's turn)."""
    receipt: Receipt
    """The service's signature on the game's history up to `version`: keep it to prove any
    later rewrite (docs/API.md, "Receipts")."""


class Feed(msgspec.Struct):
    game_id: str
    version: int
    """The game's current version."""
    events: list[FeedEntry]
    has_more: bool
    """Whether events follow this page."""
    next_after: int | None
    """Pass as `after` to read the next page; null when this page reaches the end."""


class StreamMessage(msgspec.Struct):
    """One message of an event stream (GET /games/{id}/stream), field by SSE field, as an
    SSE parser hands it over: `id: <version>`, `event: <type>`, `data: <FeedEntry as JSON>`.
    The stream also carries a `retry:` hint first and `: keep-alive` comments when idle."""

    id: Annotated[str, msgspec.Meta(pattern=r"^[0-9]+$")]
    """The game version of the event: send it back as `Last-Event-ID` to resume after it."""
    event: EventType
    """The event's `type`."""
    data: str
    """JSON: the same entry as GET /games/{id}/events gives the same viewer (`FeedEntry`)."""


class HandScore(msgspec.Struct):
    hand: int
    reason: HandEndReason
    scores: tuple[int, ...]
    totals: tuple[int, ...]


class Scores(msgspec.Struct):
    game_id: str
    variant: Variant
    version: int
    totals: tuple[int, ...]
    hands: list[HandScore]
    finished: bool
    winners: tuple[int, ...]


class ScoreRequest(msgspec.Struct, forbid_unknown_fields=True):
    """Grid variants: `[[row 0 cards], [row 1 cards]]`; tens-shedding: `[cards]`."""

    cards: list[list[CardText] | CardText]


class VariantInfo(msgspec.Struct):
    name: Variant
    min_players: int
    max_players: int
    options: list[OptionName]
    """The GameOptions fields that apply to this variant."""
    rules: str
    """The rules, as Markdown (RULES.md, every gap decided)."""


class Health(msgspec.Struct, omit_defaults=True):
    status: Literal["ok", "degraded", "unavailable"]
    """`degraded`: the primary answers, the feed replica does not (`detail` says why)."""
    store: str | None = None
    detail: str | None = None


# ---- replay (issue 9) ---------------------------------------------------------------------

Table = GridTable | SheddingTable
"""A game with nothing hidden, tagged by `family`: shown only for a hand that is over."""


class ReplayStep(msgspec.Struct):
    version: int
    event: Event
    """The event in its public shape, unredacted (the hand is over)."""
    table: Table
    """The whole table just after the event, every card included."""


class HandReplay(msgspec.Struct):
    """A finished hand step by step, folded by the decider that played it."""

    game_id: str
    hand: int
    variant: Variant
    steps: list[ReplayStep]
    seats: list[SeatInfo] = msgspec.field(default_factory=list)
    """Who holds each seat, and the level of each bot seat."""


# ---- seat seeds ---------------------------------------------------------------------

SeatSeedText = Annotated[
    str,
    msgspec.Meta(
        min_length=1,
        max_length=128,
        description="1..128 printable characters (no control, format, private-use or "
        "unassigned character, no separator but the space); UTF-8 in the deal",
    ),
]


class SetSeatSeed(msgspec.Struct, forbid_unknown_fields=True):
    """The seat's own seed for every hand dealt from now on (docs/SHUFFLE.md)."""

    seed: SeatSeedText


class SeatSeedRecorded(msgspec.Struct):
    game_id: str
    seat: int
    seed: str
    """Public: it is in the next deal's `seat_seeds`."""
    version: int
    receipt: Receipt
