"""How events become stored bytes and back: one encoder, one typed decoder, upcasters.

An event is stored as its msgspec JSON encoding (the tag field `type` included), with the
event type and a schema version beside it. The schema version of a type is 1 plus the
number of upcasters registered for it: registering the upcaster from version n to n + 1
makes n + 1 the version new events are written with. On read, an older row passes through
its chain of upcasters (each works on the plain JSON object) before the typed decode.

The hash chain covers `canonical_bytes`, a JSON array built from the stored text, so the
bytes a verifier hashes are the bytes the database holds.

Pure: no I/O. Imports `events.schema` lazily, so schema modules may register upcasters.
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Callable, Iterable, Mapping, Sequence
from functools import cache
from typing import Any, Final, Union

import msgspec

Upcaster = Callable[[dict[str, Any]], dict[str, Any]]
"""Turns the JSON object of one schema version into that of the next."""

MAX_EVENT_BYTES: Final = 64 * 1024
MAX_METADATA_BYTES: Final = 4 * 1024
TYPE_PATTERN: Final = re.compile(r"^[a-z][a-z0-9._-]{0,63}$")
GENESIS_HASH: Final = bytes(32)
"""The `prev_hash` of a stream's first event."""


class CodecError(ValueError):
    """An event or its metadata cannot be encoded or decoded (the store re-raises it as
    `InvalidEvent` on append, `UnreadableEvent` on read)."""


class NewerEvent(CodecError):
    """A stored event of a type this code does not know, or of a schema version above the
    newest it knows: written by a newer release (a rolling deploy), not garbage."""


class Encoded(msgspec.Struct, frozen=True):
    type: str
    schema_version: int
    data: bytes


class UpcasterRegistry:
    """Upcasters keyed by (event type, from_version)."""

    def __init__(self) -> None:
        self._steps: dict[tuple[str, int], Upcaster] = {}

    def register(self, event_type: str, from_version: int) -> Callable[[Upcaster], Upcaster]:
        """Decorator: `fn` turns `event_type` at `from_version` into `from_version + 1`."""

        def add(fn: Upcaster) -> Upcaster:
            key = (event_type, from_version)
            if key in self._steps:
                raise ValueError(f"an upcaster for {event_type} v{from_version} exists")
            self._steps[key] = fn
            return fn

        return add

    def steps(self) -> Mapping[tuple[str, int], Upcaster]:
        return dict(self._steps)


UPCASTERS: Final = UpcasterRegistry()
"""The registry `default_codec()` reads. Register with `@upcaster(type, from_version)` below
(schema modules stay pure and may not import this module), before the first use."""
upcaster: Final = UPCASTERS.register


class Codec:
    """Encodes and decodes the tagged union of `event_types`; build once, share."""

    def __init__(
        self,
        event_types: Iterable[type[msgspec.Struct]],
        upcasters: UpcasterRegistry | Mapping[tuple[str, int], Upcaster] = UPCASTERS,
    ) -> None:
        types = tuple(event_types)
        self._tag_of: dict[type, str] = {}
        self._known: frozenset[str] = frozenset()
        for cls in types:
            config = getattr(cls, "__struct_config__", None)
            tag = getattr(config, "tag", None)
            if not isinstance(tag, str) or getattr(config, "tag_field", None) != "type":
                raise ValueError(f"{cls!r} is not a Struct tagged by a string in `type`")
            if not TYPE_PATTERN.fullmatch(tag):
                raise ValueError(f"event type {tag!r} does not match {TYPE_PATTERN.pattern}")
            if tag in self._tag_of.values():
                raise ValueError(f"event type {tag!r} is used twice")
            self._tag_of[cls] = tag
        if not types:
            raise ValueError("a codec needs at least one event type")
        self._known = frozenset(self._tag_of.values())
        steps = upcasters.steps() if isinstance(upcasters, UpcasterRegistry) else upcasters
        self._steps: dict[tuple[str, int], Upcaster] = dict(steps)
        self._versions: dict[str, int] = {}
        for event_type, from_version in sorted(self._steps):
            expected = self._versions.get(event_type, 1)
            if from_version != expected:
                raise ValueError(
                    f"upcasters of {event_type} must run 1, 2, 3...: missing v{expected}"
                )
            self._versions[event_type] = from_version + 1
        self._union: Any = Union.__getitem__(types)
        self._decoder = msgspec.json.Decoder(self._union)
        self._list_decoder = msgspec.json.Decoder(list.__class_getitem__(self._union))
        self._encoder = msgspec.json.Encoder(order="deterministic")
        self._metadata_decoder = msgspec.json.Decoder(dict[str, Any])
        self._metadata_list_decoder = msgspec.json.Decoder(list[dict[str, Any]])

    @property
    def event_types(self) -> tuple[type, ...]:
        return tuple(self._tag_of)

    def schema_version(self, event_type: str) -> int:
        return self._versions.get(event_type, 1)

    def encode(self, event: object) -> Encoded:
        """The stored form of `event`; checks it is registered, valid and small enough."""
        event_type = self._tag_of.get(type(event))
        if event_type is None:
            raise CodecError(f"unknown event type {type(event).__qualname__}")
        try:
            data = self._encoder.encode(event)
            if len(data) > MAX_EVENT_BYTES:
                size = f"{len(data)} bytes; at most {MAX_EVENT_BYTES}"
                raise CodecError(f"{event_type} event is {size}")
            self._decoder.decode(data)  # every stored event must read back
        except (msgspec.ValidationError, msgspec.DecodeError, TypeError) as exc:
            raise CodecError(f"malformed {event_type} event: {exc}") from None
        return Encoded(event_type, self.schema_version(event_type), data)

    def decode(self, event_type: str, schema_version: int, data: bytes | str) -> object:
        """The event stored as `data`, upcast to the current shape of its type. Raises
        `NewerEvent` for a type or schema version this code does not know yet, `CodecError`
        for data that does not decode as the type and version it is stored under."""
        current = self.schema_version(event_type)
        if event_type not in self._known or schema_version > current:
            raise NewerEvent(f"{event_type} v{schema_version} is newer than this code")
        try:
            if schema_version == current:
                event = self._decoder.decode(data)
            elif 1 <= schema_version < current:
                raw = msgspec.json.decode(data)
                for version in range(schema_version, current):
                    raw = self._upcast(event_type, version, raw)
                event = msgspec.convert(raw, self._union)
            else:
                raise CodecError(f"{event_type} has no schema version {schema_version}")
        except (msgspec.ValidationError, msgspec.DecodeError) as exc:
            raise CodecError(f"cannot decode {event_type} v{schema_version}: {exc}") from None
        if schema_version == current and self._tag_of[type(event)] != event_type:
            raise CodecError(f"stored {event_type} holds a {self._tag_of[type(event)]}")
        return event

    def _upcast(self, event_type: str, version: int, raw: Any) -> Any:
        try:
            return self._steps[(event_type, version)](raw)
        except Exception as exc:  # an upcaster meeting data it did not expect
            raise CodecError(f"upcasting {event_type} v{version} failed: {exc!r}") from None

    def decode_many(
        self, event_types: Sequence[str], schema_versions: Sequence[int], datas: Sequence[str]
    ) -> list[object]:
        """`decode` of many stored events at once (one parse for a page of current ones)."""
        versions = self._versions
        if all(versions.get(t, 1) == v for t, v in zip(event_types, schema_versions, strict=True)):
            try:
                events: list[object] = self._list_decoder.decode(f"[{','.join(datas)}]")
            except (msgspec.ValidationError, msgspec.DecodeError):
                pass
            else:  # (a stored text that is not one JSON value would change the count)
                tag_of = self._tag_of
                if len(events) == len(event_types) and all(
                    tag_of[type(e)] == t for e, t in zip(events, event_types, strict=True)
                ):
                    return events
        items = zip(event_types, schema_versions, datas, strict=True)
        return [self.decode(t, v, d) for t, v, d in items]

    def decode_many_metadata(self, datas: Sequence[str]) -> list[dict[str, Any]]:
        try:
            decoded = self._metadata_list_decoder.decode(f"[{','.join(datas)}]")
        except (msgspec.ValidationError, msgspec.DecodeError) as exc:
            raise CodecError(f"cannot decode metadata: {exc}") from None
        if len(decoded) != len(datas):
            raise CodecError("a stored metadata text is not one JSON object")
        return decoded

    def encode_metadata(self, metadata: Mapping[str, Any]) -> bytes:
        if not isinstance(metadata, Mapping) or not all(isinstance(k, str) for k in metadata):
            raise CodecError("metadata must be a mapping with string keys")
        try:
            data = self._encoder.encode(dict(metadata))
        except TypeError as exc:
            raise CodecError(f"metadata is not JSON: {exc}") from None
        if len(data) > MAX_METADATA_BYTES:
            raise CodecError(f"metadata is {len(data)} bytes; at most {MAX_METADATA_BYTES}")
        return data

    def decode_metadata(self, data: bytes | str) -> dict[str, Any]:
        try:
            return self._metadata_decoder.decode(data)
        except (msgspec.ValidationError, msgspec.DecodeError) as exc:
            raise CodecError(f"cannot decode metadata: {exc}") from None


@cache
def default_codec() -> Codec:
    """The codec of every stored event type (`EVENT_TYPES`) and the registered upcasters."""
    from events.schema import EVENT_TYPES

    return Codec(EVENT_TYPES, UPCASTERS)


def canonical_bytes(
    stream_id: str,
    version: int,
    event_id: str,
    event_type: str,
    schema_version: int,
    data: bytes,
    metadata: bytes,
) -> bytes:
    """`[stream_id, version, event_id, type, schema_version, data, metadata]` as JSON, with
    data and metadata spliced in as stored. Stream ids, uuids and types are plain ASCII
    (checked on append), so the SQL function builds the very same bytes."""
    head = f'["{stream_id}",{version},"{event_id}","{event_type}",{schema_version},'
    return b"".join((head.encode(), data, b",", metadata, b"]"))


def chain_hash(prev_hash: bytes, canonical: bytes) -> bytes:
    return hashlib.sha256(prev_hash + canonical).digest()
