"""What only the embedded store shows: one file, immutable rows, several stores on one file."""

from __future__ import annotations

import sqlite3
from pathlib import Path

import pytest

from events.store import (
    ChainBroken,
    ConcurrencyError,
    EmbeddedStore,
    Unreadable,
    UnreadableEvent,
    open_store,
)
from events.store.embedded import FILE_NAME
from tests.support.event_samples import a_game, dealt, new, stream

pytestmark = pytest.mark.integration


async def test_without_a_database_url_the_store_is_a_file_in_the_data_dir(tmp_path: Path) -> None:
    async with await open_store(None, tmp_path / "data") as store:
        assert isinstance(store, EmbeddedStore)
        await store.append(stream(), 0, [new()])
    with sqlite3.connect(tmp_path / "data" / FILE_NAME) as db:
        assert db.execute("PRAGMA journal_mode").fetchone() == ("wal",)
        assert db.execute("SELECT count(*) FROM events").fetchone() == (1,)


async def test_rows_are_immutable_and_tampering_breaks_the_chain(tmp_path: Path) -> None:
    sid = stream()
    async with await EmbeddedStore.open(tmp_path) as store:
        await store.append(sid, 0, a_game(hands=2))

    db = sqlite3.connect(tmp_path / FILE_NAME, isolation_level=None)
    with pytest.raises(sqlite3.IntegrityError, match="immutable"):
        db.execute("UPDATE events SET type = type")
    with pytest.raises(sqlite3.IntegrityError, match="immutable"):
        db.execute("DELETE FROM events")
    db.execute("DROP TRIGGER events_no_update")
    db.execute(
        "UPDATE events SET data = replace(data, '\"hand\":2', '\"hand\":7')"
        " WHERE stream_id = ? AND stream_version = 3",
        (sid,),
    )
    db.close()

    async with await EmbeddedStore.open(tmp_path) as store:
        with pytest.raises(ChainBroken) as caught:
            await store.verify_stream(sid)
        assert (caught.value.stream_id, caught.value.version) == (sid, 3)
    with sqlite3.connect(tmp_path / FILE_NAME) as db, pytest.raises(sqlite3.IntegrityError):
        db.execute("UPDATE events SET type = type")  # reopening restored the trigger


async def test_two_stores_on_one_file_share_streams_and_feed(tmp_path: Path) -> None:
    sid = stream()
    async with (
        await EmbeddedStore.open(tmp_path) as one,
        await EmbeddedStore.open(tmp_path, poll_interval=0.05) as two,
    ):
        head = await two.feed_head()
        await one.append(sid, 0, [new()])
        with pytest.raises(ConcurrencyError):
            await two.append(sid, 0, [new()])
        assert await two.wait_for_events(head, timeout=5) is True
        await two.append(sid, 1, [new(dealt())])
        assert [e.version for e in await one.read_stream(sid)] == [1, 2]
        assert [e.stream_id for e in await one.read_feed(head)] == [sid, sid]


async def test_an_unreadable_stored_event_is_named(tmp_path: Path) -> None:
    sid = stream()
    async with await EmbeddedStore.open(tmp_path) as store:
        await store.append(sid, 0, a_game(hands=1))
    with sqlite3.connect(tmp_path / FILE_NAME, isolation_level=None) as db:
        db.execute("DROP TRIGGER events_no_update")
        db.execute(
            'UPDATE events SET data = \'{"type":"hand.dealt"}\''
            " WHERE stream_id = ? AND stream_version = 2",
            (sid,),
        )
    async with await EmbeddedStore.open(tmp_path) as store:
        with pytest.raises(UnreadableEvent, match=f"stream {sid} version 2") as raised:
            await store.read_stream(sid)
        assert (raised.value.stream_id, raised.value.version) == (sid, 2)
        assert raised.value.unreadable.newer is False
        fed = await store.read_feed()  # the feed gives the row, and every other one
        assert [type(e.data) is Unreadable for e in fed] == [e.version == 2 for e in fed]
