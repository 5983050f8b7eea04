"""The event store contract: envelope types, the store's exceptions, and what both
implementations share (validation, reading and decoding rows, chain verification, waiting).

Stream ids: `category` or `category:id`, where the category is lower-case letters, digits
and hyphens starting with a letter (at most 63) and the id is letters, digits, `_` and `-`
(at most 64), e.g. `game:0f3a...` or `lobby`. They are plain ASCII with nothing to escape,
which the hash chain's canonical bytes rely on.
"""

from __future__ import annotations

import abc
import asyncio
import contextlib
import re
from collections.abc import Mapping, Sequence
from datetime import datetime
from types import TracebackType
from typing import Any, Final, Self
from uuid import UUID

import msgspec

from events.codec import GENESIS_HASH, Codec, CodecError, canonical_bytes, chain_hash
from events.stored import StoredRow

STREAM_ID_PATTERN: Final = re.compile(r"^[a-z][a-z0-9-]{0,62}(:[A-Za-z0-9_-]{1,64})?$")
MAX_EVENTS_PER_APPEND: Final = 1000


# ---- exceptions -----------------------------------------------------------------------------


class StoreError(Exception):
    """Anything the event store refuses or fails to do."""


class StoreUnavailable(StoreError):
    """The database cannot be reached (or stopped answering); retrying later may work."""


class InvalidStreamId(StoreError, ValueError):
    def __init__(self, stream_id: object) -> None:
        super().__init__(f"invalid stream id {stream_id!r}: must match {STREAM_ID_PATTERN.pattern}")
        self.stream_id = stream_id


class InvalidEvent(StoreError, ValueError):
    """Malformed, oversized or of an unknown type; nothing was written."""


class ConcurrencyError(StoreError):
    """The stream is not at the expected version; reload and decide again."""

    def __init__(self, stream_id: str, expected_version: int, actual_version: int) -> None:
        super().__init__(
            f"stream {stream_id} is at version {actual_version}, not {expected_version}"
        )
        self.stream_id = stream_id
        self.expected_version = expected_version
        self.actual_version = actual_version


class EventIdConflict(StoreError):
    """Event ids already stored, but not as this append would store them (another stream,
    another version, other content): a retry must repeat the original append exactly."""


class ChainBroken(StoreError):
    """A stored event does not hash to its link in the stream's chain (or is missing)."""

    def __init__(self, stream_id: str, version: int, reason: str) -> None:
        super().__init__(f"hash chain of stream {stream_id} broken at version {version}: {reason}")
        self.stream_id = stream_id
        self.version = version


# ---- envelopes --------------------------------------------------------------------------------


class NewEvent(msgspec.Struct, frozen=True):
    """An event to append. Derive `event_id` deterministically (e.g. uuid5 of an idempotency
    key) so that a retried append lands on the idempotent path."""

    event_id: UUID
    event: object
    metadata: Mapping[str, Any] = msgspec.field(default_factory=dict)


class AppendResult(msgspec.Struct, frozen=True):
    stream_id: str
    first_version: int
    last_version: int
    positions: tuple[int, ...]
    """Global positions, one per event, in stream order."""
    head_hash: bytes = b""
    """The chain hash of the append's last event, as stored (on an idempotent retry, the
    stored one): the `prev_hash` to read what follows `last_version`, verified."""
    hashes: tuple[bytes, ...] = ()
    """The chain hash of each event, in stream order (the last is `head_hash`)."""


class Checkpoint(msgspec.Struct, frozen=True, order=True):
    """A place in the global feed: the last event read (writing transaction, position)."""

    tx_id: int = 0
    position: int = 0


START: Final = Checkpoint()


class RecordedEvent(msgspec.Struct, frozen=True):
    global_position: int
    tx_id: int
    stream_id: str
    version: int
    event_id: UUID
    type: str
    schema_version: int
    """The version stored; `data` is always upcast to the current shape."""
    data: Any
    metadata: dict[str, Any]
    recorded_at: datetime
    hash: bytes

    @property
    def checkpoint(self) -> Checkpoint:
        return Checkpoint(self.tx_id, self.global_position)


class StreamInfo(msgspec.Struct, frozen=True):
    stream_id: str
    version: int


class VerifiedStream(msgspec.Struct, frozen=True):
    stream_id: str
    version: int
    head_hash: bytes
    """The hash of the last event; keep it elsewhere to detect a truncated or rewritten tail."""


class PreparedEvent(msgspec.Struct, frozen=True):
    """An event as the store writes it (internal)."""

    event_id: str
    type: str
    schema_version: int
    data: bytes
    metadata: bytes


# ---- the contract ---------------------------------------------------------------------------


class EventStore(abc.ABC):
    """Append-only streams with optimistic concurrency, a gap-safe global feed and a hash
    chain per stream. Both implementations pass the same contract tests."""

    def __init__(self, codec: Codec, poll_interval: float) -> None:
        self.codec = codec
        self._poll_interval = poll_interval
        self._appended = asyncio.Event()

    @abc.abstractmethod
    async def append(
        self, stream_id: str, expected_version: int, events: Sequence[NewEvent]
    ) -> AppendResult:
        """Append all of `events` or none. `expected_version` is the stream's current
        version (0: the stream must not exist). Raises `ConcurrencyError` carrying the
        actual version; a retry of an append already stored returns its stored result."""

    async def read_stream(
        self,
        stream_id: str,
        from_version: int = 1,
        limit: int | None = None,
        *,
        prev_hash: bytes | None = None,
    ) -> list[RecordedEvent]:
        """The stream's events from `from_version` on (at most `limit`), in version order.

        With `prev_hash`, the chain's hash at version `from_version - 1` (`GENESIS_HASH`
        before version 1, else a hash read or appended before), the rows are checked to
        continue that chain before anything is decoded: versions without a gap from
        `from_version`, each stored hash that of its stored text. `ChainBroken` names the
        first bad link. The check reads nothing more: the same rows, the same round trip."""
        check_stream_id(stream_id)
        if prev_hash is not None and (not isinstance(prev_hash, bytes) or len(prev_hash) != 32):
            raise ValueError("prev_hash must be the 32-byte hash of the previous event")
        rows = await self._stream_rows(stream_id, from_version, limit)
        if prev_hash is not None:
            verify_chain(stream_id, from_version, prev_hash, rows)
        return self._records(rows)

    @abc.abstractmethod
    async def stream_version(self, stream_id: str) -> int:
        """The stream's current version; 0 when it does not exist."""

    @abc.abstractmethod
    async def read_feed(self, after: Checkpoint = START, limit: int = 1000) -> list[RecordedEvent]:
        """Events after `after` in feed order, never skipping one that commits late; carry
        on from the last event's `checkpoint`."""

    @abc.abstractmethod
    async def feed_head(self) -> Checkpoint:
        """The checkpoint of the last event the feed can return now (START when none)."""

    @abc.abstractmethod
    async def list_streams(
        self, prefix: str = "", after: str = "", limit: int = 100
    ) -> list[StreamInfo]:
        """Streams whose id starts with `prefix`, in id order, after the id `after`."""

    @abc.abstractmethod
    async def close(self) -> None: ...

    @abc.abstractmethod
    async def _stream_rows(
        self, stream_id: str, from_version: int, limit: int | None
    ) -> list[tuple[Any, ...]]:
        """The stream's rows from `from_version` in version order: the columns `_records`
        takes (data and metadata as their stored text), then the event id as stored text."""

    @abc.abstractmethod
    async def _start_listening(self) -> None:
        """Make sure appends elsewhere will wake `wait_for_events`."""

    async def read_stored(
        self, stream_id: str, from_version: int = 1, limit: int | None = None
    ) -> list[StoredRow]:
        """The stream's rows from `from_version` on as stored text, verifying nothing and
        decoding nothing: the audit and the export read a damaged stream through this."""
        check_stream_id(stream_id)
        rows = await self._stream_rows(stream_id, from_version, limit)
        recorded_at = self._recorded_at
        return [
            StoredRow(
                row[3],
                str(row[11]),
                row[5],
                row[6],
                _utf8(row[7]).decode(),
                _utf8(row[8]).decode(),
                recorded_at(row[9]),
                bytes(row[10]),
            )
            for row in rows
        ]

    async def verify_stream(self, stream_id: str) -> VerifiedStream:
        """Recompute the stream's whole hash chain; `ChainBroken` names the first bad link."""
        check_stream_id(stream_id)
        rows = await self._stream_rows(stream_id, 1, None)
        head = verify_chain(stream_id, 1, GENESIS_HASH, rows)
        return VerifiedStream(stream_id, len(rows), head)

    async def wait_for_events(self, after: Checkpoint, timeout: float) -> bool:
        """Wait until the feed holds an event after `after`; False when `timeout` passes."""
        loop = asyncio.get_running_loop()
        deadline = loop.time() + timeout
        await self._start_listening()
        while True:
            signal = self._appended  # taken before looking, so no wake-up falls between
            if await self.read_feed(after, limit=1):
                return True
            remaining = deadline - loop.time()
            if remaining <= 0:
                return False
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(signal.wait(), min(remaining, self._poll_interval))

    def _wake_waiters(self) -> None:
        signal, self._appended = self._appended, asyncio.Event()
        signal.set()

    def _prepare(
        self, stream_id: str, expected_version: int, events: Sequence[NewEvent]
    ) -> list[PreparedEvent]:
        check_stream_id(stream_id)
        if isinstance(expected_version, bool) or not isinstance(expected_version, int):
            raise TypeError("expected_version must be an int")
        if expected_version < 0:
            raise ValueError("expected_version must be 0 (a new stream) or more")
        if not events:
            raise InvalidEvent("an append needs at least one event")
        if len(events) > MAX_EVENTS_PER_APPEND:
            raise InvalidEvent(f"at most {MAX_EVENTS_PER_APPEND} events per append")
        prepared = []
        for new in events:
            if not isinstance(new, NewEvent) or not isinstance(new.event_id, UUID):
                raise InvalidEvent("each event must be a NewEvent with a UUID event_id")
            try:
                encoded = self.codec.encode(new.event)
                metadata = self.codec.encode_metadata(new.metadata)
            except CodecError as exc:
                raise InvalidEvent(str(exc)) from None
            prepared.append(
                PreparedEvent(
                    str(new.event_id), encoded.type, encoded.schema_version, encoded.data, metadata
                )
            )
        if len({p.event_id for p in prepared}) != len(prepared):
            raise InvalidEvent("event ids repeat within one append")
        return prepared

    def _records(self, rows: Sequence[tuple[Any, ...]]) -> list[RecordedEvent]:
        """Rows of (position, tx id, stream id, version, event id, type, schema version, data,
        metadata, recorded at, hash) as recorded events; a page is decoded in one go."""
        if not rows:
            return []
        columns = list(zip(*rows, strict=True))
        try:
            datas = self.codec.decode_many(columns[5], columns[6], columns[7])
            metas = self.codec.decode_many_metadata(columns[8])
        except CodecError:  # find the culprit, and name it
            datas = [self._decode(r[2], r[3], r[5], r[6], r[7]) for r in rows]
            metas = [self._decode_metadata(r[2], r[3], r[8]) for r in rows]
        event_id, recorded_at = self._event_id, self._recorded_at
        return [
            RecordedEvent(
                row[0],
                row[1],
                row[2],
                row[3],
                event_id(row[4]),
                row[5],
                row[6],
                data,
                meta,
                recorded_at(row[9]),
                row[10],
            )
            for row, data, meta in zip(rows, datas, metas, strict=True)
        ]

    @staticmethod
    def _event_id(stored: Any) -> UUID:
        """The event id as the database returns it, as a UUID."""
        return stored  # type: ignore[no-any-return]

    @staticmethod
    def _recorded_at(stored: Any) -> datetime:
        """The recorded time as the database returns it, as an aware datetime."""
        return stored  # type: ignore[no-any-return]

    def _decode(
        self, stream_id: str, version: int, event_type: str, schema_version: int, data: str | bytes
    ) -> object:
        try:
            return self.codec.decode(event_type, schema_version, data)
        except CodecError as exc:
            raise InvalidEvent(f"stream {stream_id} version {version}: {exc}") from None

    def _decode_metadata(self, stream_id: str, version: int, data: str | bytes) -> dict[str, Any]:
        try:
            return self.codec.decode_metadata(data)
        except CodecError as exc:
            raise InvalidEvent(f"stream {stream_id} version {version}: {exc}") from None

    async def __aenter__(self) -> Self:
        return self

    async def __aexit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        await self.close()

    @abc.abstractmethod
    async def installation(self) -> str:
        """The id of this store (a UUID's text): made once with the store (a migration of
        the PostgreSQL database, the embedded file's creation) and the same for every
        process that opens it, for good. Another store has another id, so a reader that
        keeps what it built from the feed can tell the store it follows was replaced (a
        database dropped and created again). A copy keeps the id, as it keeps the events."""


def verify_chain(
    stream_id: str, from_version: int, prev_hash: bytes, rows: Sequence[tuple[Any, ...]]
) -> bytes:
    """Check that `rows` (as `_stream_rows` returns them) continue the chain whose hash at
    `from_version - 1` is `prev_hash`; returns the hash of the last one. The canonical bytes
    are made of the stored text: event id, data and metadata as the database holds them."""
    version = from_version - 1
    for row in rows:
        version += 1
        if row[3] != version:
            raise ChainBroken(stream_id, version, f"found version {row[3]} instead")
        canonical = canonical_bytes(
            stream_id, version, row[11], row[5], row[6], _utf8(row[7]), _utf8(row[8])
        )
        prev_hash = chain_hash(prev_hash, canonical)
        if prev_hash != row[10]:
            raise ChainBroken(stream_id, version, "stored hash differs from the content")
    return prev_hash


def _utf8(stored: Any) -> bytes:
    return stored.encode() if isinstance(stored, str) else bytes(stored)


def check_stream_id(stream_id: object) -> str:
    if not isinstance(stream_id, str) or not STREAM_ID_PATTERN.fullmatch(stream_id):
        raise InvalidStreamId(stream_id)
    return stream_id
