"""The event store contract, against PostgreSQL and the embedded store alike."""

from __future__ import annotations

import asyncio
import sqlite3
import uuid
from collections.abc import Iterator
from datetime import datetime
from pathlib import Path

import msgspec
import psycopg
import pytest

from events.codec import GENESIS_HASH, MAX_EVENT_BYTES, Codec, UpcasterRegistry
from events.migrate import migrate
from events.schema import EVENT_TYPES
from events.schema.common import GameOptions, GameStarted, HandDealt
from events.store import (
    ChainBroken,
    ConcurrencyError,
    EmbeddedStore,
    EventIdConflict,
    EventStore,
    InvalidEvent,
    InvalidStreamId,
    NewEvent,
    PostgresStore,
    StreamInfo,
    Unreadable,
    UnreadableEvent,
)
from events.store.embedded import FILE_NAME
from tests.integration.events.conftest import (
    JUNK_HASH,
    MakeStore,
    Tamper,
    read_feed_until,
    settled_checkpoint,
)
from tests.support.event_samples import a_game, dealt, new, started, stream
from tests.support.services import throwaway_database

pytestmark = pytest.mark.integration


# ---- append and read ------------------------------------------------------------------------


async def test_appended_events_read_back_with_their_envelope(store: EventStore) -> None:
    sid = stream()
    events = a_game(hands=2)

    result = await store.append(sid, 0, events)

    assert (result.stream_id, result.first_version, result.last_version) == (sid, 1, 4)
    assert list(result.positions) == sorted(result.positions)
    read = await store.read_stream(sid)
    assert [e.version for e in read] == [1, 2, 3, 4]
    assert [e.global_position for e in read] == list(result.positions)
    assert [e.event_id for e in read] == [e.event_id for e in events]
    assert [e.data for e in read] == [e.event for e in events]
    assert [e.type for e in read] == ["game.started", "hand.dealt", "hand.dealt", "game.ended"]
    assert {e.schema_version for e in read} == {1}
    assert read[0].metadata == {"seat": 0}
    assert read[1].metadata == {"request": "r-1"}
    assert len({e.tx_id for e in read}) >= 1
    for event in read:
        assert event.stream_id == sid
        assert isinstance(event.recorded_at, datetime)
        assert event.recorded_at.tzinfo
        assert len(event.hash) == 32


async def test_versions_continue_across_appends(store: EventStore) -> None:
    sid = stream()
    assert await store.stream_version(sid) == 0
    await store.append(sid, 0, [new()])
    second = await store.append(sid, 1, [new(dealt(1)), new(dealt(2))])

    assert (second.first_version, second.last_version) == (2, 3)
    assert await store.stream_version(sid) == 3
    assert [e.version for e in await store.read_stream(sid, from_version=2)] == [2, 3]
    assert [e.version for e in await store.read_stream(sid, from_version=1, limit=2)] == [1, 2]
    assert await store.read_stream(stream()) == []


async def test_a_new_stream_must_not_exist_yet(store: EventStore) -> None:
    sid = stream()
    await store.append(sid, 0, a_game())

    with pytest.raises(ConcurrencyError) as caught:
        await store.append(sid, 0, [new()])

    assert (caught.value.stream_id, caught.value.actual_version) == (sid, 4)
    assert caught.value.expected_version == 0
    assert await store.stream_version(sid) == 4


@pytest.mark.parametrize("expected", [1, 3, 9])
async def test_a_wrong_expected_version_carries_the_actual_one(
    store: EventStore, expected: int
) -> None:
    sid = stream()
    await store.append(sid, 0, [new(), new(dealt())])

    with pytest.raises(ConcurrencyError) as caught:
        await store.append(sid, expected, [new(dealt(2))])

    assert caught.value.actual_version == 2
    assert len(await store.read_stream(sid)) == 2


async def test_racing_appenders_win_one_version_each_and_burn_no_position(
    store: EventStore,
) -> None:
    """50 appenders race on one stream, each retrying from the version it was told about."""
    sid = stream()
    conflicts = 0

    async def appender(writer: int) -> int:
        nonlocal conflicts
        expected = 0
        while True:
            try:
                result = await store.append(sid, expected, [new(started(), writer=writer)])
                return result.first_version
            except ConcurrencyError as lost:
                conflicts += 1
                expected = lost.actual_version

    won = await asyncio.gather(*(appender(w) for w in range(50)))

    assert sorted(won) == list(range(1, 51))
    stored = await store.read_stream(sid)
    assert [e.version for e in stored] == list(range(1, 51))
    positions = [e.global_position for e in stored]
    assert positions == list(range(positions[0], positions[0] + 50)), "a loser burnt a position"
    assert sorted(e.metadata["writer"] for e in stored) == list(range(50))
    assert conflicts > 0, "the appenders never raced"
    assert (await store.verify_stream(sid)).version == 50


# ---- idempotency ----------------------------------------------------------------------------


async def test_a_retried_append_returns_the_stored_result(store: EventStore) -> None:
    sid = stream()
    events = a_game()
    first = await store.append(sid, 0, events)

    retried = await store.append(sid, 0, events)  # the reply was lost; the caller retries

    assert retried == first
    assert len(await store.read_stream(sid)) == len(events)


async def test_a_retry_after_the_stream_moved_on_still_returns_the_stored_result(
    store: EventStore,
) -> None:
    sid = stream()
    await store.append(sid, 0, [new()])
    events = [new(dealt(1)), new(dealt(2))]
    first = await store.append(sid, 1, events)
    await store.append(sid, 3, [new(dealt(3))])

    assert await store.append(sid, 1, events) == first
    assert await store.stream_version(sid) == 4


async def test_the_same_ids_at_another_expected_version_are_an_error(store: EventStore) -> None:
    sid = stream()
    await store.append(sid, 0, [new()])
    events = [new(dealt(1))]
    await store.append(sid, 1, events)
    await store.append(sid, 2, [new(dealt(2))])

    with pytest.raises(EventIdConflict):
        await store.append(sid, 2, events)
    assert await store.stream_version(sid) == 3


async def test_the_same_ids_with_other_data_are_an_error(store: EventStore) -> None:
    sid = stream()
    original = new(dealt(1))
    await store.append(sid, 0, [original])

    with pytest.raises(EventIdConflict):
        await store.append(sid, 0, [new(dealt(2), event_id=original.event_id)])
    assert [e.data for e in await store.read_stream(sid)] == [dealt(1)]


async def test_a_partly_stored_batch_is_an_error(store: EventStore) -> None:
    sid = stream()
    stored = new()
    await store.append(sid, 0, [stored])

    with pytest.raises(EventIdConflict):
        await store.append(sid, 0, [stored, new(dealt())])
    assert await store.stream_version(sid) == 1


async def test_an_event_id_used_in_another_stream_is_an_error(store: EventStore) -> None:
    used = new()
    await store.append(stream(), 0, [used])
    other = stream()

    with pytest.raises(EventIdConflict):
        await store.append(other, 0, [used])
    assert await store.stream_version(other) == 0


# ---- refusals: nothing is written -------------------------------------------------------------


class NotAnEvent(msgspec.Struct, frozen=True, tag="not.registered"):
    note: str


@pytest.mark.parametrize(
    ("event", "why"),
    [
        (GameStarted(variant="golf", players="four"), "malformed"),  # type: ignore[arg-type]
        (GameStarted("golf", 4, GameOptions(turn_limit=0)), "malformed"),
        (HandDealt(hand=1, dealer=0, seed="s" * MAX_EVENT_BYTES, commitment=""), "bytes"),
        (NotAnEvent("hello"), "unknown event type"),
        ({"type": "game.started", "variant": "golf", "players": 4}, "unknown event type"),
    ],
)
async def test_invalid_events_are_refused_and_nothing_is_written(
    store: EventStore, event: object, why: str
) -> None:
    sid = stream()
    good = new(started())

    with pytest.raises(InvalidEvent, match=why):
        await store.append(sid, 0, [good, new(event)])  # the good one is not kept either

    assert await store.stream_version(sid) == 0
    assert (await store.append(stream(), 0, [good])).first_version == 1  # its id is free


@pytest.mark.parametrize(
    ("metadata", "why"),
    [
        ({"at": object()}, "not JSON"),
        ({1: "seat"}, "string keys"),
        ({"blob": "x" * 5000}, "bytes"),
    ],
)
async def test_invalid_metadata_is_refused(
    store: EventStore, metadata: dict[object, object], why: str
) -> None:
    sid = stream()
    with pytest.raises(InvalidEvent, match=why):
        await store.append(sid, 0, [NewEvent(uuid.uuid4(), started(), metadata)])  # type: ignore[arg-type]
    assert await store.stream_version(sid) == 0


async def test_malformed_appends_are_refused(store: EventStore) -> None:
    sid = stream()
    same = uuid.uuid4()
    with pytest.raises(InvalidEvent, match="at least one"):
        await store.append(sid, 0, [])
    with pytest.raises(InvalidEvent, match="repeat"):
        await store.append(sid, 0, [new(event_id=same), new(dealt(), event_id=same)])
    with pytest.raises(InvalidEvent, match="UUID"):
        await store.append(sid, 0, [NewEvent("not-a-uuid", started())])  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="expected_version"):
        await store.append(sid, -1, [new()])
    assert await store.stream_version(sid) == 0


@pytest.mark.parametrize(
    "stream_id",
    [
        "",
        "Game:1",
        "game:a b",
        "game:ü",
        "game;drop table events",
        "game:1:2",
        'game:"x"',
        "game\n",
        "game:",
        "1game",
        "g" * 64,
        "game:" + "x" * 65,
        None,
    ],
)
async def test_odd_stream_ids_are_refused(store: EventStore, stream_id: str) -> None:
    attempt = new()
    with pytest.raises(InvalidStreamId):
        await store.append(stream_id, 0, [attempt])
    for read in (store.read_stream, store.stream_version, store.verify_stream):
        with pytest.raises(InvalidStreamId):
            await read(stream_id)
    assert (await store.append(stream(), 0, [attempt])).first_version == 1  # nothing kept


async def test_ordinary_stream_ids_are_accepted(store: EventStore) -> None:
    for sid in ("lobby", "game:ABC_def-123", "t-9:" + "x" * 64, "g" * 63):
        await store.append(sid, await store.stream_version(sid), [new()])
        assert await store.stream_version(sid) >= 1


# ---- the feed -------------------------------------------------------------------------------


async def test_the_feed_returns_new_events_in_order_page_by_page(store: EventStore) -> None:
    head = await settled_checkpoint(store)
    one, two = stream(), stream()
    await store.append(one, 0, [new(), new(dealt())])
    await store.append(two, 0, [new()])
    await store.append(one, 2, [new(dealt(2))])

    events = await read_feed_until(store, head, {one, two}, count=4)
    assert [(e.stream_id, e.version) for e in events] == [(one, 1), (one, 2), (two, 1), (one, 3)]
    assert [e.checkpoint for e in events] == sorted(e.checkpoint for e in events)

    paged, checkpoint = [], head
    while page := await store.read_feed(checkpoint, limit=2):
        assert len(page) <= 2
        paged += page
        checkpoint = page[-1].checkpoint
    assert [e.event_id for e in paged] == [e.event_id for e in events]
    assert await store.feed_head() == events[-1].checkpoint


async def test_waiting_for_events_wakes_on_an_append(make_store: MakeStore) -> None:
    reader = await make_store(poll_interval=0.2)
    writer = await make_store()
    head = await settled_checkpoint(reader)

    assert await reader.wait_for_events(head, timeout=0.3) is False
    waiting = asyncio.create_task(reader.wait_for_events(head, timeout=20))
    await asyncio.sleep(0.1)
    assert not waiting.done()
    await writer.append(stream(), 0, [new()])

    assert await asyncio.wait_for(waiting, 20) is True


# ---- lists, hash chain, durability ----------------------------------------------------------


async def test_streams_are_listed_by_prefix(store: EventStore) -> None:
    category = f"list-{uuid.uuid4().hex[:8]}"
    await store.append(f"{category}:b", 0, [new(), new(dealt())])
    await store.append(f"{category}:a", 0, [new()])
    await store.append(f"{category}x:c", 0, [new()])

    listed = await store.list_streams(prefix=f"{category}:")
    assert listed == [StreamInfo(f"{category}:a", 1), StreamInfo(f"{category}:b", 2)]
    after = await store.list_streams(prefix=f"{category}:", after=f"{category}:a", limit=5)
    assert after == [StreamInfo(f"{category}:b", 2)]


async def test_an_untouched_stream_verifies(store: EventStore) -> None:
    sid = stream()
    await store.append(sid, 0, a_game(hands=3))
    await store.append(sid, 5, [new(dealt(4))])

    verified = await store.verify_stream(sid)

    assert (verified.stream_id, verified.version) == (sid, 6)
    assert verified.head_hash == (await store.read_stream(sid))[-1].hash
    assert (await store.verify_stream(stream())).version == 0


async def test_head_hash_is_the_stored_hash_of_the_appends_last_event(store: EventStore) -> None:
    sid = stream()
    first = await store.append(sid, 0, a_game(hands=2))
    single = [new(dealt(3))]
    second = await store.append(sid, 4, single)
    stored = {e.version: e.hash for e in await store.read_stream(sid)}

    assert first.head_hash == stored[4]
    assert second.head_hash == stored[5]
    await store.append(sid, 5, [new(dealt(4))])
    retried = await store.append(sid, 4, single)  # idempotent, after the stream moved on
    assert retried.head_hash == stored[5]
    assert retried == second


async def test_an_honest_stream_verifies_as_it_is_read(store: EventStore) -> None:
    sid = stream()
    first = await store.append(sid, 0, a_game(hands=3))
    second = await store.append(sid, 5, [new(dealt(4)), new(dealt(5))])

    verified = await store.read_stream(sid, prev_hash=GENESIS_HASH)

    assert verified == await store.read_stream(sid)
    assert [e.version for e in verified] == list(range(1, 8))
    rest = await store.read_stream(sid, 6, prev_hash=first.head_hash)
    assert [e.version for e in rest] == [6, 7]
    assert rest[-1].hash == second.head_hash
    assert await store.read_stream(sid, 8, prev_hash=second.head_hash) == []
    page = await store.read_stream(sid, 3, limit=2, prev_hash=verified[1].hash)
    assert [e.version for e in page] == [3, 4]


async def test_reading_from_the_wrong_previous_hash_breaks_the_chain(store: EventStore) -> None:
    sid = stream()
    await store.append(sid, 0, a_game(hands=2))

    with pytest.raises(ChainBroken) as caught:
        await store.read_stream(sid, 3, prev_hash=GENESIS_HASH)
    assert (caught.value.stream_id, caught.value.version) == (sid, 3)
    with pytest.raises(ValueError, match="32-byte"):
        await store.read_stream(sid, prev_hash=b"")


async def test_a_row_inserted_directly_is_caught_at_its_version(
    store: EventStore, tamper: Tamper
) -> None:
    """Given a stream read up to its head, when someone inserts the next row directly (with a
    hash that is not its link), then a verified read fails there, from the start or from the
    head it had read."""
    sid = stream()
    head = await store.append(sid, 0, [new(), new(dealt())])
    forged = '{"type":"game.started","variant":"golf","players":2}'
    await tamper.insert(sid, 3, forged, JUNK_HASH)
    assert len(await store.read_stream(sid)) == 3  # an unverified read serves it

    for from_version, prev_hash in ((1, GENESIS_HASH), (3, head.head_hash)):
        with pytest.raises(ChainBroken) as caught:
            await store.read_stream(sid, from_version, prev_hash=prev_hash)
        assert (caught.value.stream_id, caught.value.version) == (sid, 3)
    with pytest.raises(ChainBroken):
        await store.verify_stream(sid)


async def test_an_edited_row_is_caught_at_its_version(store: EventStore, tamper: Tamper) -> None:
    sid = stream()
    await store.append(sid, 0, a_game(hands=2))
    before = await store.read_stream(sid)
    await tamper.replace_data(sid, 3, '"hand":2', '"hand":7')
    assert (await store.read_stream(sid))[2].data == dealt(7)  # unverified, it is served

    for from_version in (1, 2, 3):
        prev_hash = before[from_version - 2].hash if from_version > 1 else GENESIS_HASH
        with pytest.raises(ChainBroken) as caught:
            await store.read_stream(sid, from_version, prev_hash=prev_hash)
        assert (caught.value.stream_id, caught.value.version) == (sid, 3)
    # the links after it still hold: what was read before the edit stays good
    assert len(await store.read_stream(sid, 4, prev_hash=before[2].hash)) == 1


async def test_a_removed_row_is_caught_at_its_version(store: EventStore, tamper: Tamper) -> None:
    sid = stream()
    await store.append(sid, 0, a_game(hands=2))
    await tamper.delete(sid, 2)

    with pytest.raises(ChainBroken, match="found version 3") as caught:
        await store.read_stream(sid, prev_hash=GENESIS_HASH)
    assert caught.value.version == 2


async def test_events_survive_reopening_the_store(make_store: MakeStore) -> None:
    sid = stream()
    first = await make_store()
    await first.append(sid, 0, a_game())
    before = await first.read_stream(sid)
    await first.close()

    reopened = await make_store()

    assert await reopened.read_stream(sid) == before
    assert (await reopened.verify_stream(sid)).version == len(before)
    await reopened.append(sid, len(before), [new(dealt(9))])
    assert await reopened.stream_version(sid) == len(before) + 1


# ---- schema versions ------------------------------------------------------------------------


class ScoreRecordedV1(msgspec.Struct, frozen=True, tag="test.score.recorded"):
    seat: int
    points: int


class ScoreRecorded(msgspec.Struct, frozen=True, tag="test.score.recorded"):
    """Version 2: `points` became `score`, and the hand is recorded."""

    seat: int
    score: int
    hand: int


def _v2_registry() -> UpcasterRegistry:
    registry = UpcasterRegistry()

    @registry.register("test.score.recorded", 1)
    def points_became_score(old: dict[str, object]) -> dict[str, object]:
        return {"type": old["type"], "seat": old["seat"], "score": old["points"], "hand": 0}

    return registry


async def test_an_old_shape_is_read_in_the_new_one(make_store: MakeStore) -> None:
    sid = stream("test")
    old_code = await make_store(codec=Codec((*EVENT_TYPES, ScoreRecordedV1), UpcasterRegistry()))
    head = await old_code.feed_head()
    await old_code.append(sid, 0, [new(ScoreRecordedV1(seat=2, points=7))])

    new_code = await make_store(codec=Codec((*EVENT_TYPES, ScoreRecorded), _v2_registry()))
    await new_code.append(sid, 1, [new(ScoreRecorded(seat=1, score=3, hand=2))])
    read = await new_code.read_stream(sid)

    assert [e.data for e in read] == [ScoreRecorded(2, 7, 0), ScoreRecorded(1, 3, 2)]
    assert [e.schema_version for e in read] == [1, 2]
    fed = await read_feed_until(new_code, head, {sid}, count=2)
    assert [e.data for e in fed] == [e.data for e in read]
    assert (await new_code.verify_stream(sid)).version == 2
    with pytest.raises(UnreadableEvent, match="newer release") as raised:
        await old_code.read_stream(sid)
    assert raised.value.unreadable.newer
    assert raised.value.version == 2
    old_fed = await read_feed_until(old_code, head, {sid}, count=2)
    assert old_fed[0].data == ScoreRecordedV1(seat=2, points=7)
    unreadable = old_fed[1].data
    assert isinstance(unreadable, Unreadable)
    assert (unreadable.type, unreadable.schema_version, unreadable.kind) == (
        "test.score.recorded",
        2,
        "newer",
    )


# ---- the installation -----------------------------------------------------------------------


@pytest.fixture
def another_store(
    store_kind: str, request: pytest.FixtureRequest, tmp_path: Path
) -> Iterator[MakeStore]:
    """Opens a store of this test's kind on another database (or file) than `make_store`."""
    if store_kind == "postgres":
        server = request.getfixturevalue("postgres_server_url")
        with throwaway_database(server, "fairway_other") as url:
            migrate(url)
            yield lambda: PostgresStore.open(url, poll_interval=0.2)
    else:
        yield lambda: EmbeddedStore.open(tmp_path / "other", poll_interval=0.2)


async def test_every_opening_of_a_store_names_the_same_installation(make_store: MakeStore) -> None:
    first = await make_store()
    installation = await first.installation()
    assert str(uuid.UUID(installation)) == installation
    await first.close()
    assert await (await make_store()).installation() == installation
    assert await (await make_store()).installation() == installation


async def test_another_store_names_another_installation(
    store: EventStore, another_store: MakeStore
) -> None:
    other = await another_store()
    try:
        assert await other.installation() != await store.installation()
    finally:
        await other.close()


async def test_the_installation_cannot_be_changed_or_doubled(
    store: EventStore, store_kind: str, request: pytest.FixtureRequest, tmp_path: Path
) -> None:
    """Not by the owner of the database (or whoever holds the file) either: the id of a
    store is for good."""
    installation = await store.installation()
    if store_kind == "postgres":
        url = request.getfixturevalue("database_url")
        with psycopg.connect(url, autocommit=True) as conn:
            for statement in (
                "UPDATE installation SET id = gen_random_uuid()",
                "DELETE FROM installation",
                "INSERT INTO installation DEFAULT VALUES",
            ):
                with pytest.raises(psycopg.Error):
                    conn.execute(statement.encode())
    else:
        db = sqlite3.connect(tmp_path / FILE_NAME, isolation_level=None)
        try:
            for statement in (
                "UPDATE installation SET id = 'mine'",
                "DELETE FROM installation",
                "INSERT INTO installation (id) VALUES ('second')",
            ):
                with pytest.raises(sqlite3.Error):
                    db.execute(statement)
        finally:
            db.close()
    assert await store.installation() == installation
