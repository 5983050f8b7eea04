"""`read_stored`: a stream's rows as stored text, for both stores (the audit and the export
read a stream through it). Given a stream, its rows carry the stored JSON text, the event id
as stored and the chain hashes, from a version on and at most a limit of them; the chain
recomputed over them holds and ends at the head `verify_stream` finds."""

from __future__ import annotations

import uuid

import msgspec
import pytest

from events.store import EventStore, InvalidStreamId
from service.audit.chain import check_chain
from tests.support.event_samples import a_game, dealt, new, stream

pytestmark = pytest.mark.integration


async def test_the_rows_are_the_stored_text_and_hashes(store: EventStore) -> None:
    sid = stream()
    await store.append(sid, 0, a_game(hands=2))
    await store.append(sid, 4, [new(dealt(3), request="r-1")])

    rows = await store.read_stored(sid)
    recorded = await store.read_stream(sid)

    assert [r.version for r in rows] == [1, 2, 3, 4, 5]
    for row, event in zip(rows, recorded, strict=True):
        assert row.event_id == str(event.event_id)
        assert row.type == event.type
        assert row.schema_version == event.schema_version
        assert row.data == msgspec.json.encode(event.data).decode()
        assert msgspec.json.decode(row.metadata) == event.metadata
        assert row.recorded_at == event.recorded_at
        assert row.hash == event.hash
    assert rows[-1].metadata == '{"request":"r-1"}'


async def test_a_range_of_rows_and_no_rows(store: EventStore) -> None:
    sid = stream()
    await store.append(sid, 0, a_game(hands=3))
    assert [r.version for r in await store.read_stored(sid, 3, 2)] == [3, 4]
    assert await store.read_stored(sid, 99) == []
    assert await store.read_stored(stream()) == []
    with pytest.raises(InvalidStreamId):
        await store.read_stored("not a stream id")


async def test_the_chain_over_the_rows_holds_to_the_verified_head(store: EventStore) -> None:
    game_id = uuid.uuid4().hex[:16]
    sid = f"game:{game_id}"
    await store.append(sid, 0, a_game(hands=2))
    rows = await store.read_stored(sid)
    verified = await store.verify_stream(sid)
    chain = check_chain(game_id, rows)
    assert chain.intact
    assert chain.head_hash == verified.head_hash.hex()
    assert not check_chain(uuid.uuid4().hex[:16], rows).intact  # the game id is in every link
