"""Idempotency-Keys: what an append records of its key, how a stream's record remembers the
keys used in it, and what a key derives (event ids, tokens, a stream's id).

A key is the client's: a retried request sends it again. Everything derived from it (the
event ids of the append it made, a token it was answered with) derives again the same, so a
retry whose answer was lost lands on the events the first attempt stored.
"""

from __future__ import annotations

import base64
import hashlib
import hmac
import uuid
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

IDEMPOTENCY_KEY = "idempotency_key"
IDEMPOTENCY_SCOPE = "idempotency_scope"
"""Whose key it is: a game's `seat:N` (an action), `claim`, `start`, `seed:N`; a
tournament's `organiser`, `player:NAME`. Absent on a game's early events, which were all
actions (scope `seat:N` of their `seat`)."""
REQUEST_HASH = "request_hash"


@dataclass(frozen=True, slots=True)
class Key:
    """An `Idempotency-Key` as a command stores it: `value` is what the events' metadata
    keeps (a digest where the key also derives a secret token), `request_hash` the body's."""

    value: str
    request_hash: str

    def metadata(self, scope: str) -> dict[str, str]:
        return {
            IDEMPOTENCY_KEY: self.value,
            IDEMPOTENCY_SCOPE: scope,
            REQUEST_HASH: self.request_hash,
        }


@dataclass(frozen=True, slots=True)
class KeyUse:
    """What a key did in a stream: the request it came with and the versions it appended."""

    request_hash: str
    first_version: int
    last_version: int


def note_use(
    keys: dict[tuple[str, str], KeyUse],
    metadata: Mapping[str, Any],
    version: int,
    scope: str | None = None,
) -> None:
    """Fold the key (if any) that appended the event at `version`; `scope` stands in for
    one the metadata does not name."""
    key, named = metadata.get(IDEMPOTENCY_KEY), metadata.get(IDEMPOTENCY_SCOPE)
    scope = scope if named is None else named
    if isinstance(key, str) and isinstance(scope, str):
        used = keys.get((scope, key))
        first = used.first_version if used is not None else version
        keys[(scope, key)] = KeyUse(str(metadata.get(REQUEST_HASH)), first, version)


def event_ids(namespace: uuid.UUID, count: int, base: str | None) -> list[uuid.UUID]:
    """The ids of an append's events: derived from `base` (what the append is, named so
    that a retry names it again), else random."""
    if base is None:
        return [uuid.uuid4() for _ in range(count)]
    return [uuid.uuid5(namespace, f"{base}|{i}") for i in range(count)]


def creation_id(namespace: uuid.UUID, key: str) -> uuid.UUID:
    """The id of a stream's first event, created with an Idempotency-Key."""
    return uuid.uuid5(namespace, f"create|{key_digest(key)}")


def key_digest(key: str) -> str:
    """What the store keeps of an Idempotency-Key that derives a secret: the key itself
    never reaches the database, so reading the events does not give away a token."""
    return hashlib.sha256(b"fairway idempotency key\x00" + key.encode()).hexdigest()


def derived_token(purpose: str, *parts: str) -> str:
    """A secret that a retried request can derive again from its Idempotency-Key: the key
    is the client's secret (at least 16 characters; a random UUID is right)."""
    message = "\x00".join(parts).encode()
    digest = hmac.new(b"fairway " + purpose.encode(), message, hashlib.sha256).digest()
    if purpose == "game-id":
        return digest.hex()
    return base64.urlsafe_b64encode(digest[:24]).decode()
