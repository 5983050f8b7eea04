"""What the event store speaks in: stream ids, the envelopes of appends and reads, the store's
own exceptions, and the check that stored rows continue a hash chain. The store itself (the
base both implementations extend) is in contract.py.

Stream ids: `category` or `category:id`, where the category is lower-case letters, digits
and hyphens starting with a letter (at most 63) and the id is letters, digits, `_` and `-`
(at most 64), e.g. `game:0f3a...` or `lobby`. They are plain ASCII with nothing to escape,
which the hash chain's canonical bytes rely on.
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Mapping, Sequence
from datetime import datetime
from typing import Any, Final
from uuid import UUID

import msgspec

from events.codec import canonical_bytes, chain_hash

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


class RegisteredKey(msgspec.Struct, frozen=True):
    """A public key that signs receipts for the games in the store, as registered there."""

    key_id: str
    """How a receipt names its signer (service/contract/receipts.py defines it)."""
    public_key: bytes
    """The 32-byte Ed25519 public key."""
    first_seen: datetime
    """When it was first registered."""


class PreparedEvent(msgspec.Struct, frozen=True):
    """An event as the store writes it (internal)."""

    event_id: str
    type: str
    schema_version: int
    data: bytes
    metadata: bytes


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
            stream_id, version, row[11], row[5], row[6], utf8(row[7]), utf8(row[8])
        )
        prev_hash = chain_hash(prev_hash, canonical)
        if prev_hash != row[10]:
            raise ChainBroken(stream_id, version, "stored hash differs from the content")
    return prev_hash


def utf8(stored: Any) -> bytes:
    """A stored text column as bytes, whichever of str or bytes the driver gave."""
    return stored.encode() if isinstance(stored, str) else bytes(stored)


def check_receipt_key(key_id: object, public_key: object) -> None:
    """A `ValueError` unless `public_key` is 32 bytes and `key_id` names it as a receipt
    does: the first 16 hex digits of its SHA-256 (service/contract/receipts.py; the table's
    CHECK in PostgreSQL says the same)."""
    if not isinstance(public_key, bytes) or len(public_key) != 32:
        raise ValueError("a receipt key is a 32-byte Ed25519 public key")
    if key_id != hashlib.sha256(public_key).hexdigest()[:16]:
        raise ValueError(f"{key_id!r} is not the id of this receipt key")


def check_stream_id(stream_id: object) -> str:
    if not isinstance(stream_id, str) or not STREAM_ID_PATTERN.fullmatch(stream_id):
        raise InvalidStreamId(stream_id)
    return stream_id
