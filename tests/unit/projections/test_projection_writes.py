"""A batch's writes fold to their net effect, the fold names the docs that docs point at,
and cursors refuse what no page handed out."""

from __future__ import annotations

import uuid
from datetime import UTC, datetime
from typing import Any

import pytest

from events.store import RecordedEvent
from projections.base import Delete, Incr, IndexAdd, IndexEntry, IndexRemove, InvalidCursor, Put
from projections.paging import after, decode_cursor, encode_cursor
from projections.runner import MissingDocs, Runner, VersionGap
from projections.store import Changes

pytestmark = pytest.mark.unit


def test_the_last_write_to_a_key_wins_and_a_delete_resets_a_counter() -> None:
    changes = Changes()
    for write in (
        Put("a", {"v": 1}),
        Incr("c", "x", 2),
        Delete("c"),
        Incr("c", "x", 5),
        Put("a", {"v": 2}),
        IndexAdd("i", "m", 1.0),
        IndexRemove("i", "m"),
        IndexAdd("i", "n", 2.0),
    ):
        changes.add(write)
    assert changes.docs == {"a": {"v": 2}, "c": None}
    assert changes.counters == {"c": (True, {"x": 5})}
    assert changes.index == {("i", "m"): None, ("i", "n"): 2.0}
    with pytest.raises(TypeError):
        changes.add("not a write")  # type: ignore[arg-type]


@pytest.mark.parametrize(
    "entry", [IndexEntry("g1", 0.0), IndexEntry("ü/+=", 1.5e15), IndexEntry("", -3.25)]
)
def test_a_cursor_names_its_entry_exactly(entry: IndexEntry) -> None:
    cursor = encode_cursor(entry)
    assert cursor.isascii()
    assert "=" not in cursor
    assert decode_cursor(cursor) == entry


@pytest.mark.parametrize(
    "cursor", ["", "?", "WyJhIl0", "WzEsMiwzXQ", "WyJOYU4iLCJ4Il0", "WzFlOTk5LCJ4Il0"]
)
def test_a_cursor_that_is_not_an_entry_is_refused(cursor: str) -> None:
    with pytest.raises(InvalidCursor):
        decode_cursor(cursor)


def test_after_follows_the_order_of_the_page() -> None:
    here = IndexEntry("m", 2.0)
    assert after(IndexEntry("n", 2.0), here, descending=False)
    assert after(IndexEntry("a", 3.0), here, descending=False)
    assert not after(here, here, descending=False)
    assert after(IndexEntry("l", 2.0), here, descending=True)
    assert not after(IndexEntry("n", 2.0), here, descending=True)


class _Scripted:
    """A projection whose writes per event are given: to check the runner's fold alone."""

    name = "scripted"
    version = 1

    def __init__(self, writes: dict[int, list[object]]) -> None:
        self.writes = writes
        self.seen: list[dict[str, object]] = []

    def keys(self, event: object) -> list[str]:
        return ["a"]

    def apply(self, event: object, docs: dict[str, object]) -> list[object]:
        self.seen.append(dict(docs))
        return self.writes[event.version]  # type: ignore[attr-defined]


def _event(version: int, stream: str = "game:x") -> RecordedEvent:
    return RecordedEvent(
        version, version, stream, version, uuid.uuid4(), "t", 1, None, {}, datetime.now(UTC), b""
    )


def test_the_fold_shows_each_event_the_batch_so_far_and_keeps_the_net_effect() -> None:
    projection = _Scripted(
        {
            1: [Put("a", {"v": 1}), IndexAdd("i", "m", 1.0)],
            2: [Delete("a"), Incr("c", "n", 2)],
            3: [Put("a", {"v": 3}), Delete("c"), Incr("c", "n", 1), IndexRemove("i", "m")],
        }
    )
    runner = Runner(projection, None, None)  # type: ignore[arg-type]
    changes, applied = runner.fold([_event(1), _event(2), _event(3)], {}, {})
    assert applied == 3
    assert projection.seen == [{"a": None}, {"a": {"v": 1}}, {"a": None}]
    assert changes.docs == {"a": {"v": 3}, "c": None}
    assert changes.counters == {"c": (True, {"n": 1})}
    assert changes.index == {("i", "m"): None}
    assert changes.versions == {"game:x": 3}


def test_the_fold_skips_what_was_applied_and_stops_at_a_gap() -> None:
    projection = _Scripted({3: [Put("a", {})], 4: [Put("a", {"v": 4})]})
    runner = Runner(projection, None, None)  # type: ignore[arg-type]
    changes, applied = runner.fold([_event(2), _event(3)], {}, {"game:x": 2})
    assert (applied, changes.versions) == (1, {"game:x": 3})
    with pytest.raises(VersionGap) as gap:
        runner.fold([_event(5)], {}, {"game:x": 3})
    assert (gap.value.stream_id, gap.value.applied, gap.value.found) == ("game:x", 3, 5)


class _Pointing(_Scripted):
    """Each event's doc `a` names a further doc (`{"to": key}`) that `apply` reads too."""

    def more_keys(self, event: object, docs: dict[str, Any]) -> list[str]:
        doc = docs["a"]
        return [] if doc is None else [doc["to"]]


def test_the_fold_names_every_doc_more_keys_asks_that_it_was_not_given() -> None:
    """Given docs that point at others the fold was not given (one pointed at by the doc an
    earlier event of the batch wrote), then the fold names them all; given them, it shows
    each event its further doc as the batch's earlier events left it."""
    projection = _Pointing(
        {
            1: [Put("b", {"v": 1})],
            2: [Put("a", {"to": "c"})],
            3: [Put("c", {"v": 3})],
        }
    )
    runner = Runner(projection, None, None)  # type: ignore[arg-type]
    events = [_event(1), _event(2), _event(3)]
    with pytest.raises(MissingDocs) as missing:
        runner.fold(events, {"a": {"to": "b"}}, {})
    assert missing.value.keys == ["b"]
    with pytest.raises(MissingDocs) as missing:
        runner.fold(events, {"a": {"to": "b"}, "b": None}, {})
    assert missing.value.keys == ["c"]
    projection.seen.clear()
    changes, applied = runner.fold(events, {"a": {"to": "b"}, "b": None, "c": {"v": 0}}, {})
    assert applied == 3
    assert projection.seen == [
        {"a": {"to": "b"}, "b": None},
        {"a": {"to": "b"}, "b": {"v": 1}},
        {"a": {"to": "c"}, "c": {"v": 0}},
    ]
    assert changes.docs == {"b": {"v": 1}, "a": {"to": "c"}, "c": {"v": 3}}
