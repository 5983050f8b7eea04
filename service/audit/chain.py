"""The hash chain, checked over stored rows, with the first broken link named.

Each link is `sha256(previous link || canonical bytes)` (docs/EVENT_STORE.md). A link that
does not hold says the row changed, but not which part of it; when exactly one thing was
altered the next link tells the two cases apart: if the next event still chains from the
stored hash, the row's content changed; if it chains from the recomputed one, the stored
hash itself did.
"""

from __future__ import annotations

from collections.abc import Sequence

from events.codec import GENESIS_HASH, canonical_bytes, chain_hash
from events.stored import StoredRow
from service.audit.report import ChainReport, Failure

CONTENT = "event_id, type, schema_version, data or metadata"


def link(stream_id: str, prev: bytes, row: StoredRow) -> bytes:
    canonical = canonical_bytes(
        stream_id,
        row.version,
        row.event_id,
        row.type,
        row.schema_version,
        row.data.encode("utf-8", "surrogatepass"),  # (a lone surrogate: not stored text)
        row.metadata.encode("utf-8", "surrogatepass"),
    )
    return chain_hash(prev, canonical)


def check_chain(game_id: str, rows: Sequence[StoredRow]) -> ChainReport:
    stream_id = f"game:{game_id}"
    prev = GENESIS_HASH
    for index, row in enumerate(rows):
        version = index + 1
        if row.version != version:
            found = f"found version {row.version} where {version} was due"
            return _broken(
                rows,
                Failure("chain", version, "version", f"{found}: a row is missing or renumbered"),
            )
        computed = link(stream_id, prev, row)
        if computed != row.hash:
            return _broken(rows, _fault(stream_id, rows, index, computed))
        prev = computed
    return ChainReport(True, len(rows), prev.hex() if rows else None)


def _broken(rows: Sequence[StoredRow], failure: Failure) -> ChainReport:
    return ChainReport(False, len(rows), rows[-1].hash.hex() if rows else None, failure)


def _fault(stream_id: str, rows: Sequence[StoredRow], index: int, computed: bytes) -> Failure:
    row = rows[index]
    following = rows[index + 1] if index + 1 < len(rows) else None
    if following is not None and following.version == row.version + 1:
        if link(stream_id, row.hash, following) == following.hash:
            return Failure(
                "chain",
                row.version,
                CONTENT,
                "altered: the stored hash is not the link of this event's content "
                "(the next event still chains from the stored hash)",
            )
        if link(stream_id, computed, following) == following.hash:
            return Failure(
                "chain",
                row.version,
                "hash",
                "altered: the next event chains from this event's recomputed link, "
                "not from the hash stored",
            )
    if index == 0 and not any(
        link(stream_id, rows[i - 1].hash if i else GENESIS_HASH, r) == r.hash
        for i, r in enumerate(rows)
    ):
        return Failure(
            "chain",
            row.version,
            "game_id",
            "no event hashes to its stored link under this game id: the game id (which "
            "every link covers) or every event was altered",
        )
    return Failure(
        "chain",
        row.version,
        f"hash or {CONTENT}",
        "altered: the stored hash is not the link of this event's content",
    )
