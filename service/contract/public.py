"""The public contract: the shapes of events as the API serves them (a game's feed, a
tournament's own events), apart from how they are stored.

A stored event and its public shape evolve separately. Each public event type is declared
here as a projection of a stored one: the same tag and fields, less the fields the API
never shows (secrets such as token hashes are absent, not blanked), with closed sets typed
as enums and a value hidden from the viewer as `null`. A stored field added later reaches
clients only through this declaration, and the committed OpenAPI document (checked for drift
in CI) shows any change to the contract in review.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Literal, Union

import msgspec

from events.schema import common, grid, lobby, shedding, tournament
from events.schema.common import SeedHex

Variant = Literal["hang-ten", "tens", "golf", "basketball", "tens-shedding"]
Seating = Literal["swiss", "rotation"]
ResignReason = Literal["resigned", "withdrawn"]
"""Why the bot plays a seat: its holder resigned, or its player withdrew from the tournament."""
PlayedForReason = Literal["timeout", "resigned", "withdrawn"]
"""Why the service played a seat's turn: its clock ran out, or the seat resigned/withdrew."""
HandEndReason = Literal["went_out", "all_face_up", "turn_limit", "stock_exhausted"]
"""Why a hand ended: a player went out (Golf, Tens-shedding), every card was face up,
the turn limit was reached, or the stock could not be rebuilt."""


@dataclass(frozen=True)
class Shape:
    """How a stored event type is shown: `hidden` fields are left out, `types` override a
    field's type, and in `blank_is_null` an empty string (redacted) is shown as null."""

    stored: type
    hidden: tuple[str, ...] = ()
    types: Mapping[str, Any] = field(default_factory=dict)
    blank_is_null: tuple[str, ...] = ()


SHAPES: tuple[Shape, ...] = (
    Shape(
        lobby.GameCreated,
        hidden=("creator_hash",),
        types={"variant": Variant, "seed_anchor": SeedHex | None, "seed_secret": SeedHex | None},
        blank_is_null=("seed_anchor", "seed_secret"),
    ),
    Shape(lobby.SeatClaimed, hidden=("token_hash",)),
    Shape(lobby.SeatReleased),
    Shape(lobby.SeatSeedSet),
    Shape(
        lobby.SeedChainExtended,
        types={"anchor": SeedHex, "secret": SeedHex | None},
        blank_is_null=("secret",),
    ),
    Shape(lobby.SeatResigned, types={"reason": ResignReason}),
    Shape(lobby.TurnPlayedFor, types={"reason": PlayedForReason}),
    Shape(lobby.GameRematched),
    Shape(common.GameStarted, types={"variant": Variant}),
    Shape(
        common.HandDealt,
        types={"seed": SeedHex | None, "server_seed": SeedHex | None},
        blank_is_null=("seed", "server_seed"),
    ),
    Shape(
        common.HandEnded,
        types={"reason": HandEndReason, "seed": SeedHex, "server_seed": SeedHex | None},
        blank_is_null=("server_seed",),
    ),
    Shape(common.GameEnded),
    *(Shape(kind) for kind in grid.EVENTS),
    *(Shape(kind) for kind in shedding.EVENTS),
)


def _public_type(shape: Shape) -> type[msgspec.Struct]:
    config = shape.stored.__struct_config__  # type: ignore[attr-defined]
    fields: list[tuple[str, Any] | tuple[str, Any, Any]] = []
    for info in msgspec.structs.fields(shape.stored):
        if info.name in shape.hidden:
            continue
        kind = shape.types.get(info.name, info.type)
        if info.required:
            fields.append((info.name, kind))
        elif info.default == "" and info.name in shape.blank_is_null:
            fields.append((info.name, kind, None))
        elif info.default is not msgspec.NODEFAULT:
            fields.append((info.name, kind, info.default))
        else:
            fields.append((info.name, kind, msgspec.field(default_factory=info.default_factory)))
    public = msgspec.defstruct(
        shape.stored.__name__,
        fields,
        tag=config.tag,
        tag_field=config.tag_field,
        frozen=True,
        module=__name__,
    )
    public.__doc__ = shape.stored.__doc__
    return public


_PUBLIC: dict[type, tuple[type[msgspec.Struct], Shape]] = {}


def project(shapes: tuple[Shape, ...]) -> tuple[type[msgspec.Struct], ...]:
    """The public types of `shapes`, in order; `to_public` shows their events from now on."""
    for shape in shapes:
        _PUBLIC[shape.stored] = (_public_type(shape), shape)
    return tuple(_PUBLIC[shape.stored][0] for shape in shapes)


PUBLIC_EVENTS = project(SHAPES)
if TYPE_CHECKING:  # a checker cannot read a Union built from a computed tuple
    Event = msgspec.Struct
else:
    Event = Union[PUBLIC_EVENTS]  # noqa: UP007
"""Every event of the feed, tagged by `type`."""

TOURNAMENT_EVENTS = project(
    (
        Shape(
            tournament.TournamentCreated,
            hidden=("organiser_hash",),
            types={
                "variant": Variant,
                "seating": Seating,
                "seed_anchor": SeedHex,
                "seed_secret": SeedHex | None,
            },
            blank_is_null=("seed_secret",),
        ),
        Shape(tournament.PlayerRegistered, hidden=("token_hash",)),
        Shape(tournament.PlayerWithdrawn),
        Shape(tournament.PlayerSeedSet),
        Shape(tournament.RoundStarted),
        Shape(tournament.RoundClosed),
        Shape(tournament.TournamentEnded),
    )
)
TournamentEvent = Union[TOURNAMENT_EVENTS]  # type: ignore[valid-type]  # noqa: UP007
"""Every event of a tournament's own stream, tagged by `type`."""


def to_public(event: Any) -> Any:
    """A stored event (already redacted for its viewer) in its public shape."""
    public, shape = _PUBLIC[type(event)]
    values = {name: getattr(event, name) for name in public.__struct_fields__}
    for name in shape.blank_is_null:
        if values[name] == "":
            values[name] = None
    return public(**values)
