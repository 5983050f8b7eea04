"""The export of a finished game (`fairway-game-export/1`, GET /games/{id}/export and the
input of `fairway verify`): a header with the rules, seats, seeds and head hash, then every
stored event with its chain fields. Read strictly: a field this verifier does not know is
refused, not ignored."""

from __future__ import annotations

from typing import Final, Literal

import msgspec

from domain.grid.rules import GridRules
from domain.shedding.rules import Rules as SheddingRules
from events.schema.common import GameOptions
from service.contract.public import Variant
from service.contract.schemas import SeatInfo

EXPORT_FORMAT: Final = "fairway-game-export/1"


class GridRulesRecord(
    GridRules, frozen=True, tag_field="family", tag="grid", forbid_unknown_fields=True
):
    """The rules record of a grid variant, as its decider holds it. An export's records are
    read strictly (a field this verifier does not know is refused, not ignored): a mangled
    key must not pass as the default it would otherwise fall back to."""


class SheddingRulesRecord(
    SheddingRules, frozen=True, tag_field="family", tag="shedding", forbid_unknown_fields=True
):
    """Tens-shedding's rules with every option filled in."""


RulesRecord = GridRulesRecord | SheddingRulesRecord


class ExportedEvent(msgspec.Struct, forbid_unknown_fields=True):
    """One stored event with its chain fields: `data` and `metadata` are the stored JSON
    text exactly, so the link `sha256(prev_hash || canonical bytes)` can be recomputed."""

    version: int
    event_id: str
    type: str
    schema_version: int
    data: str
    metadata: str
    recorded_at: str
    """When it was stored (RFC 3339); not covered by the chain."""
    hash: str
    prev_hash: str


class ExportedSeat(SeatInfo, forbid_unknown_fields=True):
    """A seat of the header, read strictly like the rest: a mangled `bot` key must not pass
    as the person's seat it would otherwise default to."""


class ExportedSeed(msgspec.Struct, forbid_unknown_fields=True):
    hand: int
    commitment: str
    """SHA-256 of `seed`, published at the deal."""
    seed: str
    """Revealed when the hand ended."""


class ExportHeader(msgspec.Struct, forbid_unknown_fields=True):
    """Everything about a finished game but its events (the first line of the NDJSON
    export; every field of it is checked against the events by `fairway verify`)."""

    format: Literal["fairway-game-export/1"]
    game_id: str
    variant: Variant
    rules: RulesRecord
    options: GameOptions
    seats: list[ExportedSeat]
    seeds: list[ExportedSeed]
    winners: tuple[int, ...]
    event_count: int
    head_hash: str
    """The hash of the last event: keep it to detect a rewritten history later."""
    rules_version: str = ""
    """The rules version `game.created` names (`golf/1`; "" in an export of a game created
    before the field, or made before it): a verifier that does not implement it refuses
    the export by name (domain/rules_versions.py)."""


class GameExport(ExportHeader, kw_only=True):
    """A finished game as one self-contained document: `fairway verify FILE` checks it
    with no database and no server."""

    events: list[ExportedEvent]
