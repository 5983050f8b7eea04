"""The event store: the contract, its two implementations and the factory."""

from events.codec import GENESIS_HASH
from events.store.base import (
    MAX_EVENTS_PER_APPEND,
    START,
    STREAM_ID_PATTERN,
    AppendResult,
    ChainBroken,
    Checkpoint,
    ConcurrencyError,
    EventIdConflict,
    InvalidEvent,
    InvalidStreamId,
    NewEvent,
    RecordedEvent,
    RegisteredKey,
    StoreError,
    StoreUnavailable,
    StreamInfo,
    VerifiedStream,
)
from events.store.contract import EventStore
from events.store.embedded import EmbeddedStore
from events.store.factory import open_store
from events.store.postgres import PostgresStore
from events.store.replica import ReplicaStore, close_feed, open_feed
from events.store.unreadable import Unreadable, UnreadableEvent
from events.stored import StoredRow

__all__ = [
    "GENESIS_HASH",
    "MAX_EVENTS_PER_APPEND",
    "START",
    "STREAM_ID_PATTERN",
    "AppendResult",
    "ChainBroken",
    "Checkpoint",
    "ConcurrencyError",
    "EmbeddedStore",
    "EventIdConflict",
    "EventStore",
    "InvalidEvent",
    "InvalidStreamId",
    "NewEvent",
    "PostgresStore",
    "RecordedEvent",
    "RegisteredKey",
    "ReplicaStore",
    "StoreError",
    "StoreUnavailable",
    "StoredRow",
    "StreamInfo",
    "Unreadable",
    "UnreadableEvent",
    "VerifiedStream",
    "close_feed",
    "open_feed",
    "open_store",
]
