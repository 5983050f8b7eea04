"""The event store contract: `EventStore`, the base both implementations extend (PostgreSQL
and the embedded file), with what they share: validating an append, reading and decoding
rows, verifying a stream's chain, waiting for events. Both pass the same contract tests.
The types it speaks in and its exceptions are in base.py."""

from __future__ import annotations

import abc
import asyncio
import contextlib
from collections.abc import Callable, Sequence
from datetime import datetime
from types import TracebackType
from typing import Any, Self
from uuid import UUID

from events.codec import GENESIS_HASH, Codec, CodecError, NewerEvent
from events.store.base import (
    MAX_EVENTS_PER_APPEND,
    START,
    AppendResult,
    Checkpoint,
    InvalidEvent,
    NewEvent,
    PreparedEvent,
    RecordedEvent,
    RegisteredKey,
    StreamInfo,
    VerifiedStream,
    check_receipt_key,
    check_stream_id,
    utf8,
    verify_chain,
)
from events.store.lead import Lead
from events.store.unreadable import Sightings, Unreadable, UnreadableEvent
from events.stored import StoredRow


class EventStore(abc.ABC):
    """Append-only streams with optimistic concurrency, a gap-safe global feed and a hash
    chain per stream. Both implementations pass the same contract tests."""

    def __init__(self, codec: Codec, poll_interval: float) -> None:
        self.codec = codec
        self._poll_interval = poll_interval
        self._appended = asyncio.Event()
        self.unreadable = Sightings()
        """Reports each row this code cannot decode once (add a listener to count them)."""
        self.append_batches: list[Callable[[int], None]] = []
        """Each is told how many appends every commit carried: PostgreSQL's group commit
        (postgres_group.py); the embedded store commits each append alone and tells none."""
        self.wake_listeners: list[Callable[[], None]] = []
        """Called whenever this store wakes its waiters (something was appended): a feed
        replica, which cannot LISTEN, takes its wake-ups from here (events/store/replica.py)."""

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
        first bad link. The check reads nothing more: the same rows, the same round trip.
        A row this code cannot decode raises `UnreadableEvent`, naming it."""
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
        on from the last event's `checkpoint`. A row this code cannot decode comes with an
        `Unreadable` as its data: one stream's fault stops no reader of the feed."""

    @abc.abstractmethod
    async def feed_head(self) -> Checkpoint:
        """The checkpoint of the last event the feed can return now (START when none)."""

    async def source_head(self) -> Checkpoint:
        """The head of the store this feed follows: `feed_head()`, except on a replica,
        where it is the primary's (a replica behind is lagging, not restored)."""
        return await self.feed_head()

    @abc.abstractmethod
    async def list_streams(
        self, prefix: str = "", after: str = "", limit: int = 100
    ) -> list[StreamInfo]:
        """Streams whose id starts with `prefix`, in id order, after the id `after`."""

    async def register_receipt_key(self, key_id: str, public_key: bytes) -> None:
        """Keep `public_key` (which receipts name `key_id`) among the keys that sign
        receipts for the games in this store; registering it again changes nothing. A key is
        kept for good, so that its receipts stay checkable after it signs no more. A key
        not of 32 bytes, or an id that does not name it, is a `ValueError`."""
        check_receipt_key(key_id, public_key)
        await self._register_receipt_key(key_id, public_key)

    @abc.abstractmethod
    async def receipt_keys(self) -> list[RegisteredKey]:
        """Every registered receipt key, first seen first."""

    async def try_lead(self, name: str = "background") -> Lead | None:
        """The installation's lead called `name` (events/store/lead.py), taken without
        waiting: None when another process holds it. The embedded store is one process's:
        it always leads."""
        return Lead()

    @abc.abstractmethod
    async def installation(self) -> str:
        """The id of this store (a UUID's text): made once with the store (a migration of
        the PostgreSQL database, the embedded file's creation) and the same for every
        process that opens it, for good. Another store has another id, so a reader that
        keeps what it built from the feed can tell the store it follows was replaced (a
        database dropped and created again). A copy keeps the id, as it keeps the events."""

    @abc.abstractmethod
    async def close(self) -> None: ...

    @abc.abstractmethod
    async def _register_receipt_key(self, key_id: str, public_key: bytes) -> None: ...

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
                utf8(row[7]).decode(),
                utf8(row[8]).decode(),
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
            # asyncio.timeout, not wait_for: on Python 3.11 wait_for returns the result when
            # the wait ends in the very turn the task is cancelled, and the cancel is lost
            # (a consumer's stop then waited for ever: the referee's test, CI's hang).
            with contextlib.suppress(TimeoutError):
                async with asyncio.timeout(min(remaining, self._poll_interval)):
                    await signal.wait()

    def _wake_waiters(self) -> None:
        signal, self._appended = self._appended, asyncio.Event()
        signal.set()
        for listener in self.wake_listeners:
            listener()

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

    def _records(self, rows: Sequence[tuple[Any, ...]], feed: bool = False) -> list[RecordedEvent]:
        """Rows of (position, tx id, stream id, version, event id, type, schema version, data,
        metadata, recorded at, hash) as recorded events; a page is decoded in one go. A row
        that does not decode raises `UnreadableEvent`; in the `feed`, it is given with an
        `Unreadable` as its data (and no metadata), so that one stream stops no reader."""
        if not rows:
            return []
        columns = list(zip(*rows, strict=True))
        try:
            datas = self.codec.decode_many(columns[5], columns[6], columns[7])
            metas = self.codec.decode_many_metadata(columns[8])
        except CodecError:  # find the culprit, and name it
            decoded = [self._decode(row, feed) for row in rows]
            datas, metas = [d for d, _ in decoded], [m for _, m in decoded]
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

    def _decode(self, row: tuple[Any, ...], feed: bool) -> tuple[object, dict[str, Any]]:
        """One row's data and metadata; an undecodable row is reported once, then raised or
        (in the feed) given as `Unreadable`."""
        try:
            return self.codec.decode(row[5], row[6], row[7]), self.codec.decode_metadata(row[8])
        except CodecError as exc:
            unreadable = Unreadable(row[5], row[6], isinstance(exc, NewerEvent), str(exc))
        self.unreadable.report(row[2], row[3], unreadable)
        if not feed:
            raise UnreadableEvent(row[2], row[3], unreadable)
        return unreadable, {}

    async def __aenter__(self) -> Self:
        return self

    async def __aexit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        await self.close()
