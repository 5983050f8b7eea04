"""The projection store contract, for Redis and in memory alike: generations behind an alias,
atomic batches that commit once, net effects of a batch's writes, paging by cursor."""

from __future__ import annotations

import pytest

from events.store import START, Checkpoint
from projections.base import (
    Delete,
    Incr,
    IndexAdd,
    IndexRemove,
    InvalidCursor,
    ProjectionsUnavailable,
    Put,
    Write,
)
from projections.store import Changes, Outcome, ProjectionStore

pytestmark = pytest.mark.integration


def changes(*writes: Write, versions: dict[str, int] | None = None) -> Changes:
    batch = Changes()
    for write in writes:
        batch.add(write)
    batch.versions.update(versions or {})
    return batch


async def live(store: ProjectionStore, name: str = "demo") -> int:
    generation = await store.begin(name, 1)
    assert await store.switch(name, generation.number, None)
    return generation.number


async def test_a_new_generation_starts_empty_at_the_start_and_is_numbered_above_the_last(
    pstore: ProjectionStore,
) -> None:
    assert await pstore.alias("demo") is None
    first = await pstore.begin("demo", 3)
    second = await pstore.begin("demo", 3)
    assert (first.number, first.version, first.checkpoint, first.state) == (
        1,
        3,
        START,
        "rebuilding",
    )
    assert second.number == 2
    assert await pstore.newest("demo") == 2
    assert await pstore.generations("demo") == [1, 2]
    snapshot = await pstore.snapshot("demo", 1, ["a"], ["game:x"])
    assert snapshot is not None
    assert (snapshot.checkpoint, snapshot.docs, snapshot.versions) == (
        START,
        {"a": None},
        {"game:x": 0},
    )


async def test_the_alias_switches_only_from_the_generation_expected(
    pstore: ProjectionStore,
) -> None:
    one = await pstore.begin("demo", 1)
    two = await pstore.begin("demo", 1)
    assert await pstore.switch("demo", one.number, None)
    assert not await pstore.switch("demo", two.number, None)  # someone switched first
    assert not await pstore.switch("demo", two.number, 7)
    assert await pstore.switch("demo", two.number, one.number)
    assert await pstore.alias("demo") == two.number


async def test_a_batch_commits_once_and_a_second_from_the_same_start_finds_it_moved(
    pstore: ProjectionStore,
) -> None:
    number = await live(pstore)
    end = Checkpoint(5, 5)
    batch = changes(Put("a", {"n": 1}), versions={"game:x": 3})
    assert await pstore.commit("demo", number, START, end, batch) is Outcome.COMMITTED
    again = changes(Put("a", {"n": 2}), versions={"game:x": 4})
    assert await pstore.commit("demo", number, START, Checkpoint(6, 6), again) is Outcome.MOVED
    snapshot = await pstore.snapshot("demo", number, ["a"], ["game:x"])
    assert snapshot is not None
    assert snapshot.checkpoint == end
    assert snapshot.docs == {"a": {"n": 1}}
    assert snapshot.versions == {"game:x": 3}
    assert await pstore.get("demo", "a") == {"n": 1}


async def test_a_dropped_generation_takes_no_batch_and_leaves_nothing(
    pstore: ProjectionStore,
) -> None:
    number = await live(pstore)
    batch = changes(Put("a", {}), Incr("c", "x", 1), IndexAdd("i", "m", 1.0), versions={"s": 1})
    assert await pstore.commit("demo", number, START, Checkpoint(1, 1), batch) is Outcome.COMMITTED
    await pstore.drop("demo", number)
    assert await pstore.generation("demo", number) is None
    assert await pstore.snapshot("demo", number, ["a"], []) is None
    late = changes(Put("b", {}))
    assert (
        await pstore.commit("demo", number, Checkpoint(1, 1), Checkpoint(2, 2), late)
        is Outcome.GONE
    )
    assert await pstore.dump("demo", number) == {}
    assert await pstore.generations("demo") == []


async def test_only_the_net_effect_of_a_batch_is_stored(pstore: ProjectionStore) -> None:
    number = await live(pstore)
    first = changes(Incr("c", "wins", 2), Incr("gone", "x", 1), IndexAdd("i", "old", 1.0))
    assert await pstore.commit("demo", number, START, Checkpoint(1, 1), first) is Outcome.COMMITTED
    second = changes(
        Put("a", {"v": 1}),
        Put("a", {"v": 2}),
        Put("b", {"v": 1}),
        Delete("b"),
        Incr("c", "wins", 3),
        Incr("c", "losses", 1),
        Incr("c", "losses", -1),
        Delete("gone"),
        IndexAdd("i", "m", 5.0),
        IndexAdd("i", "m", 2.5),
        IndexRemove("i", "old"),
        IndexAdd("i", "n", 2.5),
        versions={"game:1": 9},
    )
    assert (
        await pstore.commit("demo", number, Checkpoint(1, 1), Checkpoint(2, 2), second)
        is Outcome.COMMITTED
    )
    assert await pstore.dump("demo", number) == {
        "k:a": {"v": 2},
        "k:c": {"wins": 5, "losses": 0},
        "i:i": [("m", 2.5), ("n", 2.5)],
        "streams": {"game:1": 9},
    }
    assert await pstore.get_many("demo", ["a", "b", "nope"]) == [{"v": 2}, None, None]
    assert await pstore.counters("demo", "c") == {"wins": 5, "losses": 0}
    assert await pstore.counters("demo", "gone") == {}


async def test_readers_need_a_live_generation(pstore: ProjectionStore) -> None:
    await pstore.begin("demo", 1)  # being built: not yet switched in
    with pytest.raises(ProjectionsUnavailable):
        await pstore.get("demo", "a")
    with pytest.raises(ProjectionsUnavailable):
        await pstore.page("demo", "i", limit=5)


async def fill(
    store: ProjectionStore, number: int, start: Checkpoint, *writes: Write
) -> Checkpoint:
    end = Checkpoint(start.tx_id + 1, start.position + 1)
    assert await store.commit("demo", number, start, end, changes(*writes)) is Outcome.COMMITTED
    return end


async def everything(
    store: ProjectionStore, limit: int, **options: object
) -> list[tuple[str, float]]:
    found: list[tuple[str, float]] = []
    cursor = None
    while True:
        page = await store.page("demo", "i", limit=limit, cursor=cursor, **options)  # type: ignore[arg-type]
        assert len(page.entries) <= limit
        found += [(e.member, e.score) for e in page.entries]
        cursor = page.next_cursor
        if cursor is None:
            return found


@pytest.mark.parametrize("descending", [False, True])
async def test_pages_follow_score_then_member_and_concatenate_to_the_whole(
    pstore: ProjectionStore, descending: bool
) -> None:
    number = await live(pstore)
    entries = [(f"m{i:02}", float(i // 3)) for i in range(20)]  # ties of three
    await fill(pstore, number, START, *(IndexAdd("i", m, s) for m, s in entries))
    expected = sorted(entries, key=lambda e: (e[1], e[0]), reverse=descending)
    for limit in (1, 3, 7, 20, 50):
        assert await everything(pstore, limit, descending=descending) == expected
    bounded = [e for e in expected if 2.0 <= e[1] <= 4.0]
    assert (
        await everything(pstore, 2, descending=descending, min_score=2.0, max_score=4.0) == bounded
    )


async def test_a_cursor_holds_its_place_while_the_index_changes(pstore: ProjectionStore) -> None:
    number = await live(pstore)
    at = await fill(pstore, number, START, *(IndexAdd("i", f"m{i}", float(i)) for i in range(10)))
    first = await pstore.page("demo", "i", limit=4)
    assert [e.member for e in first.entries] == ["m0", "m1", "m2", "m3"]
    # the last entry returned is removed, one is added before the cursor and one after
    await fill(
        pstore, number, at, IndexRemove("i", "m3"), IndexAdd("i", "a", 1.5), IndexAdd("i", "z", 4.5)
    )
    rest = await pstore.page("demo", "i", limit=100, cursor=first.next_cursor)
    assert [e.member for e in rest.entries] == ["m4", "z", "m5", "m6", "m7", "m8", "m9"]
    assert rest.next_cursor is None


@pytest.mark.parametrize("changed", [1, 5, 60, 100])
async def test_a_batch_that_rescores_removes_and_adds_many_members_leaves_them_in_order(
    pstore: ProjectionStore, changed: int
) -> None:
    """The in-memory store makes a few changes one by one and many in one pass
    (projections/memory.py, `_Index.update`): either way the index is what the changes
    make of it, as Redis has it."""
    number = await live(pstore)
    held = {f"m{i:03}": float(i % 7) for i in range(100)}
    at = await fill(pstore, number, START, *(IndexAdd("i", m, s) for m, s in held.items()))
    writes: list[Write] = []
    for i, member in enumerate(sorted(held)[:changed]):
        if i % 3 == 0:
            writes.append(IndexRemove("i", member))
            del held[member]
        else:
            held[member] = 10.0 - i % 5
            writes.append(IndexAdd("i", member, held[member]))
    for i in range(changed // 2):
        held[f"new{i}"] = float(i % 4)
        writes.append(IndexAdd("i", f"new{i}", held[f"new{i}"]))
    await fill(pstore, number, at, *writes)
    expected = sorted(held.items(), key=lambda e: (e[1], e[0]))
    assert await everything(pstore, 30) == expected
    assert await everything(pstore, 30, descending=True) == expected[::-1]


async def test_removing_every_member_in_one_batch_empties_the_index(
    pstore: ProjectionStore,
) -> None:
    number = await live(pstore)
    at = await fill(pstore, number, START, *(IndexAdd("i", f"m{i}", float(i)) for i in range(40)))
    await fill(pstore, number, at, *(IndexRemove("i", f"m{i}") for i in range(40)))
    assert await everything(pstore, 10) == []


@pytest.mark.parametrize(
    "cursor", ["", "!!!", "e30", "W10", "WyJ4IiwgMV0", "a" * 500, "WzEuMCxudWxsXQ"]
)
async def test_a_cursor_no_page_handed_out_is_refused(pstore: ProjectionStore, cursor: str) -> None:
    await live(pstore)
    with pytest.raises(InvalidCursor):
        await pstore.page("demo", "i", limit=3, cursor=cursor)


async def test_marking_records_the_state_and_never_brings_back_a_dropped_generation(
    pstore: ProjectionStore,
) -> None:
    number = await live(pstore)
    await pstore.mark("demo", number, "failed", "a gap")
    meta = await pstore.generation("demo", number)
    assert meta is not None
    assert (meta.state, meta.error) == ("failed", "a gap")
    await pstore.drop("demo", number)
    await pstore.mark("demo", number, "running")
    assert await pstore.generation("demo", number) is None
    assert await pstore.generations("demo") == []


async def test_values_come_back_exactly_whatever_they_hold(pstore: ProjectionStore) -> None:
    number = await live(pstore)
    doc = {"name": 'Zoë 🂡 "quoted" \\ ', "big": 2**62 + 1, "small": -(2**62), "f": 0.1, "n": None}
    score = 1763874000123457.0  # microseconds: more digits than a Lua number prints
    batch = changes(
        Put("ü/key with spaces", doc),
        Incr("c", "ß", 2**40),
        IndexAdd("i", "mëmber 🂡", score),
        versions={"game:ü": 2**31},
    )
    assert (
        await pstore.commit("demo", number, START, Checkpoint(2**40, 2**41), batch)
        is Outcome.COMMITTED
    )
    assert await pstore.get("demo", "ü/key with spaces") == doc
    assert await pstore.counters("demo", "c") == {"ß": 2**40}
    page = await pstore.page("demo", "i", limit=5)
    assert [(e.member, e.score) for e in page.entries] == [("mëmber 🂡", score)]
    snapshot = await pstore.snapshot("demo", number, [], ["game:ü"])
    assert snapshot is not None
    assert snapshot.versions == {"game:ü": 2**31}
    assert snapshot.checkpoint == Checkpoint(2**40, 2**41)


async def test_within_one_batch_a_put_after_a_delete_stands_and_a_delete_after_a_put_wins(
    pstore: ProjectionStore,
) -> None:
    number = await live(pstore)
    at = await fill(
        pstore, number, START, Put("a", {"v": 1}), Put("b", {"v": 1}), Incr("c", "n", 1)
    )
    await fill(
        pstore,
        number,
        at,
        Delete("a"),
        Put("a", {"v": 2}),
        Put("b", {"v": 2}),
        Delete("b"),
        Delete("c"),
        Incr("c", "n", 5),
    )
    assert await pstore.get("demo", "a") == {"v": 2}
    assert await pstore.get("demo", "b") is None
    assert await pstore.counters("demo", "c") == {"n": 5}


async def test_a_generation_names_the_event_store_it_is_built_from(
    pstore: ProjectionStore,
) -> None:
    named = await pstore.begin("demo", 1, "0f4c2d6e-0000-4000-8000-000000000001")
    unnamed = await pstore.begin("demo", 1)
    stored = await pstore.generation("demo", named.number)
    assert stored is not None
    assert stored.source == "0f4c2d6e-0000-4000-8000-000000000001"
    assert (await pstore.generation("demo", unnamed.number)) == unnamed
    assert unnamed.source == ""


async def test_rebuilds_are_counted_by_projection_and_reason(pstore: ProjectionStore) -> None:
    assert await pstore.rebuilds("demo") == {}
    for reason in ("missing", "another_store", "another_store"):
        await pstore.count_rebuild("demo", reason)
    await pstore.count_rebuild("other", "version")
    assert await pstore.rebuilds("demo") == {"missing": 1, "another_store": 2}
    assert await pstore.rebuilds("other") == {"version": 1}
