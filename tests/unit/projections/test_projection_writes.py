"""A batch's writes fold to their net effect, and cursors refuse what no page handed out."""

from __future__ import annotations

import pytest

from projections.base import Delete, Incr, IndexAdd, IndexEntry, IndexRemove, InvalidCursor, Put
from projections.paging import after, decode_cursor, encode_cursor
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
