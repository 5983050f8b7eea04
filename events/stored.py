"""A stream's row exactly as stored: the store's undecoded read, and what an audit or an
export works from. Apart from the store's modules, so that an offline verifier needs no
database driver."""

from __future__ import annotations

from datetime import datetime

import msgspec


class StoredRow(msgspec.Struct, frozen=True):
    """A stream's row exactly as stored, undecoded: what an audit or an export works from,
    so that a row that no longer decodes, or breaks the chain, is reported rather than
    raised. `data` and `metadata` are the stored JSON text, `event_id` its stored text."""

    version: int
    event_id: str
    type: str
    schema_version: int
    data: str
    metadata: str
    recorded_at: datetime
    hash: bytes
