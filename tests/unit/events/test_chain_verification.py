"""Verifying a stream's rows as the continuation of a hash chain (`verify_chain`), as both
stores do on `read_stream(..., prev_hash=...)` and `verify_stream`."""

from __future__ import annotations

import uuid
from typing import Any

import pytest

from events.codec import GENESIS_HASH, canonical_bytes, chain_hash
from events.store.base import ChainBroken, verify_chain

pytestmark = pytest.mark.unit

SID = "game:unit"


def chained(count: int, prev: bytes = GENESIS_HASH, first: int = 1) -> list[tuple[Any, ...]]:
    """Honest rows as the stores read them: the envelope's columns (the event id as a UUID),
    then the event id's stored text."""
    rows = []
    for version in range(first, first + count):
        event_id = uuid.uuid4()
        data, metadata = f'{{"type":"hand.dealt","hand":{version}}}', '{"seat":0}'
        canonical = canonical_bytes(
            SID, version, str(event_id), "hand.dealt", 1, data.encode(), metadata.encode()
        )
        prev = chain_hash(prev, canonical)
        envelope = (version, 0, SID, version, event_id, "hand.dealt", 1, data, metadata, 0, prev)
        rows.append((*envelope, str(event_id)))
    return rows


def test_honest_rows_verify_and_give_the_head_hash() -> None:
    rows = chained(5)
    assert verify_chain(SID, 1, GENESIS_HASH, rows) == rows[-1][10]
    assert verify_chain(SID, 3, rows[1][10], rows[2:]) == rows[-1][10]
    assert verify_chain(SID, 6, rows[-1][10], []) == rows[-1][10]


def test_the_event_id_is_hashed_as_its_stored_text() -> None:
    rows = chained(3)
    rows[1] = (*rows[1][:11], rows[1][11].upper())  # the same uuid, spelt otherwise
    with pytest.raises(ChainBroken) as caught:
        verify_chain(SID, 1, GENESIS_HASH, rows)
    assert caught.value.version == 2


@pytest.mark.parametrize(
    ("change", "version", "reason"),
    [
        (lambda rows: rows.__setitem__(2, (*rows[2][:10], bytes(32), rows[2][11])), 3, "hash"),
        (lambda rows: rows.__setitem__(1, (*rows[1][:7], '{"hand":9}', *rows[1][8:])), 2, "hash"),
        (lambda rows: rows.__setitem__(3, (*rows[3][:8], '{"seat":1}', *rows[3][9:])), 4, "hash"),
        (lambda rows: rows.__delitem__(1), 2, "found version 3"),
    ],
)
def test_the_first_bad_link_is_named(change: Any, version: int, reason: str) -> None:
    rows = chained(5)
    change(rows)
    with pytest.raises(ChainBroken, match=reason) as caught:
        verify_chain(SID, 1, GENESIS_HASH, rows)
    assert (caught.value.stream_id, caught.value.version) == (SID, version)


def test_rows_that_do_not_follow_the_given_hash_are_refused() -> None:
    rows = chained(4)
    with pytest.raises(ChainBroken) as caught:
        verify_chain(SID, 3, rows[0][10], rows[2:])  # the hash at version 1, not 2
    assert caught.value.version == 3
