"""A finished game as one self-contained document, and the way back from it to rows.

The document holds every event as stored (data and metadata as their exact text, so the
chain can be recomputed) and a header that repeats what the events say: the variant, its
rules record, the options, the seats, each hand's commitment and seed, the winners, the
number of events and the last hash. The header is checked against the events, field by
field, so that altering any one field of the document fails and names it.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from datetime import datetime
from typing import Any

import msgspec

from domain.errors import RuleViolation
from domain.grid import GridGame
from domain.variants import decider_for
from events.codec import GENESIS_HASH, CodecError, default_codec
from events.schema.common import GameEnded, HandDealt, HandEnded
from events.schema.lobby import GameCreated, SeatClaimed, SeatReleased
from events.stored import StoredRow
from service.audit.report import CheckResult, Failure
from service.contract.export import (
    EXPORT_FORMAT,
    ExportedEvent,
    ExportedSeat,
    ExportedSeed,
    ExportHeader,
    GameExport,
    GridRulesRecord,
    RulesRecord,
    SheddingRulesRecord,
)

HEADER_TYPES = frozenset({"game.created", "seat.claimed", "seat.released", "hand.dealt"})
HEADER_TYPES |= {"hand.ended", "game.ended"}


class ExportRefused(Exception):
    """The game cannot be exported: `code` is the problem code (`game_in_play`)."""

    def __init__(self, code: str, detail: str) -> None:
        super().__init__(detail)
        self.code = code
        self.detail = detail


class Facts(msgspec.Struct):
    """What the events say about the header's fields."""

    created: GameCreated | None = None
    names: list[str | None] = []
    bots: list[str | None] = []
    seeds: dict[int, ExportedSeed] = {}
    winners: tuple[int, ...] | None = None


def facts(rows: Sequence[StoredRow]) -> Facts:
    """The header's facts, read from the few events that hold them (those that do not
    decode are left to the audit to report)."""
    codec = default_codec()
    found = Facts(names=[], bots=[], seeds={})
    for row in rows:
        if row.type not in HEADER_TYPES:
            continue
        try:
            event = codec.decode(row.type, row.schema_version, row.data)
        except CodecError:
            continue
        match event:
            case GameCreated():
                found.created = found.created or event
                found.names = [None] * event.seats
                found.bots = [None] * event.seats
            case SeatClaimed(seat=seat, name=name, bot=bot) if seat < len(found.names):
                found.names[seat] = name
                found.bots[seat] = bot or None
            case SeatReleased(seat=seat) if seat < len(found.names):
                found.names[seat] = found.bots[seat] = None
            case HandDealt():
                found.seeds[event.hand] = ExportedSeed(event.hand, event.commitment, "")
            case HandEnded() if event.hand in found.seeds:
                dealt = found.seeds[event.hand]
                found.seeds[event.hand] = ExportedSeed(event.hand, dealt.commitment, event.seed)
            case GameEnded():
                found.winners = event.winners
    return found


def seats_of(known: Facts) -> list[ExportedSeat]:
    """The header's seats: each holder's name, and the level of each bot seat."""
    return [ExportedSeat(seat, name, known.bots[seat]) for seat, name in enumerate(known.names)]


def rules_record(variant: str, players: int, options: Any) -> RulesRecord:
    decider = decider_for(variant)
    if isinstance(decider, GridGame):
        return GridRulesRecord(**msgspec.structs.asdict(decider.rules))
    rules = decider.initial_state(players, options).rules
    return SheddingRulesRecord(**msgspec.structs.asdict(rules))


def export_game(game_id: str, rows: Sequence[StoredRow]) -> GameExport:
    """The export of a finished game; `ExportRefused("game_in_play")` before its end."""
    known = facts(rows)
    created = known.created
    if created is None or known.winners is None:
        raise ExportRefused(
            "game_in_play", f"game {game_id} is not over: only a finished game is exported"
        )
    events = [
        ExportedEvent(
            version=row.version,
            event_id=row.event_id,
            type=row.type,
            schema_version=row.schema_version,
            data=row.data,
            metadata=row.metadata,
            recorded_at=row.recorded_at.isoformat(),
            hash=row.hash.hex(),
            prev_hash=(rows[i - 1].hash if i else GENESIS_HASH).hex(),
        )
        for i, row in enumerate(rows)
    ]
    return GameExport(
        format=EXPORT_FORMAT,
        game_id=game_id,
        variant=created.variant,  # type: ignore[arg-type]
        rules=rules_record(created.variant, created.seats, created.options),
        options=created.options,
        seats=seats_of(known),
        seeds=[known.seeds[hand] for hand in sorted(known.seeds)],
        winners=known.winners,
        event_count=len(events),
        head_hash=events[-1].hash,
        rules_version=created.rules_version,
        events=events,
    )


def ndjson_lines(export: GameExport) -> Iterator[bytes]:
    """The header, then one line per event."""
    encoder = msgspec.json.Encoder()
    fields = {f: getattr(export, f) for f in ExportHeader.__struct_fields__}
    yield encoder.encode(ExportHeader(**fields)) + b"\n"
    for event in export.events:
        yield encoder.encode(event) + b"\n"


_DOCUMENT = msgspec.json.Decoder(GameExport)
_HEADER = msgspec.json.Decoder(ExportHeader)
_EVENT = msgspec.json.Decoder(ExportedEvent)


def parse(text: bytes) -> GameExport:
    """A JSON or NDJSON export; `ValueError` naming what does not fit its schema."""
    lines = [line for line in text.split(b"\n") if line.strip()]
    if len(lines) < 2 or not _is_header(lines[0]):
        try:
            return _DOCUMENT.decode(text)
        except (msgspec.ValidationError, msgspec.DecodeError) as exc:
            raise ValueError(f"not a {EXPORT_FORMAT} document: {exc}") from None
    if not lines:
        raise ValueError("the file is empty")
    try:
        header = _HEADER.decode(lines[0])
    except (msgspec.ValidationError, msgspec.DecodeError) as exc:
        raise ValueError(f"line 1 is not an export header: {exc}") from None
    events = []
    for number, line in enumerate(lines[1:], start=2):
        try:
            events.append(_EVENT.decode(line))
        except (msgspec.ValidationError, msgspec.DecodeError) as exc:
            raise ValueError(f"line {number} is not an exported event: {exc}") from None
    fields = {f: getattr(header, f) for f in ExportHeader.__struct_fields__}
    return GameExport(**fields, events=events)


def _is_header(line: bytes) -> bool:
    """Whether the first line is an NDJSON header (a header object on a line of its own)."""
    try:
        _HEADER.decode(line)
    except msgspec.DecodeError:
        return False
    except msgspec.ValidationError:
        return line.lstrip().startswith(b"{") and line.rstrip().endswith(b"}")
    return True


def stored_rows(export: GameExport) -> tuple[list[StoredRow], list[Failure]]:
    """The export's events as stored rows; a hash or time that cannot be read is a failure
    (its row keeps an empty hash, which breaks the chain there)."""
    rows, failures = [], []
    for event in export.events:
        try:
            link = bytes.fromhex(event.hash)
            if len(link) != 32:
                raise ValueError
        except ValueError:
            link = b""
            failures.append(Failure("export", event.version, "hash", "is not 64 hex digits"))
        try:
            recorded_at = datetime.fromisoformat(event.recorded_at)
            if recorded_at.tzinfo is None:
                raise ValueError
        except ValueError:
            recorded_at = datetime.min
            detail = "is not a time with its offset from UTC (RFC 3339)"
            failures.append(Failure("export", event.version, "recorded_at", detail))
        rows.append(
            StoredRow(
                event.version,
                event.event_id,
                event.type,
                event.schema_version,
                event.data,
                event.metadata,
                recorded_at,
                link,
            )
        )
    return rows, failures


def check_export(export: GameExport, rows: Sequence[StoredRow]) -> CheckResult:
    """The header and the chain fields beside each event, against the events."""
    failures = _header_failures(export, rows) + _event_failures(export)
    first = min(failures, key=lambda f: f.version or 0) if failures else None
    return CheckResult("export", first is None, len(export.events) + 1, first)


def _header_failures(export: GameExport, rows: Sequence[StoredRow]) -> list[Failure]:
    known = facts(rows)
    out: list[Failure] = []

    def differs(field: str, expected: Any, found: Any) -> None:
        if expected != found:
            detail = f"differs from the events (expected {_show(expected)}, found {_show(found)})"
            out.append(Failure("export", None, field, detail))

    differs("event_count", len(export.events), export.event_count)
    differs("head_hash", export.events[-1].hash if export.events else "", export.head_hash)
    if known.created is None:
        out.append(Failure("export", None, "events", "hold no game.created: not a game"))
    if known.winners is None:
        out.append(Failure("export", None, "events", "hold no game.ended: not a finished game"))
    created = known.created
    if created is not None:
        differs("variant", created.variant, export.variant)
        differs("options", created.options, export.options)
        differs("rules_version", created.rules_version, export.rules_version)
        try:
            record: Any = rules_record(created.variant, created.seats, created.options)
        except RuleViolation as refused:  # an unknown variant or options no game allows
            out.append(Failure("export", None, "variant", f"no rules to check: {refused}"))
            record = None
        if record is not None:
            for name in type(record).__struct_fields__:
                differs(f"rules.{name}", getattr(record, name), getattr(export.rules, name, None))
            differs("rules.family", type(record).__name__, type(export.rules).__name__)
    differs("seats", seats_of(known), export.seats)
    for index, seed in enumerate(export.seeds):
        want = known.seeds.get(seed.hand)
        if want is None:
            differs(f"seeds[{index}].hand", sorted(known.seeds), seed.hand)
            continue
        differs(f"seeds[{index}].commitment", want.commitment, seed.commitment)
        differs(f"seeds[{index}].seed", want.seed, seed.seed)
    differs("seeds", sorted(known.seeds), [seed.hand for seed in export.seeds])
    differs("winners", known.winners, export.winners)
    return out


def _event_failures(export: GameExport) -> list[Failure]:
    out = []
    prev = GENESIS_HASH.hex()
    for event in export.events:
        if event.prev_hash != prev:
            detail = (
                f"is not the hash of the event before (expected {prev}, found {event.prev_hash})"
            )
            out.append(Failure("export", event.version, "prev_hash", detail))
        prev = event.hash
    return out


def _show(value: Any) -> str:
    return msgspec.json.encode(value).decode()
