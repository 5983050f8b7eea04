"""Each unreadable row is reported once per process, within a bounded memory."""

from __future__ import annotations

import logging

import pytest

from events.store.unreadable import Sightings, Unreadable, UnreadableEvent

pytestmark = pytest.mark.unit

NEWER = Unreadable("game.paused", 1, True, "game.paused v1 is newer than this code")
GARBAGE = Unreadable("seat.claimed", 1, False, "cannot decode seat.claimed v1")


def test_a_row_is_reported_once_however_often_it_is_read(caplog: pytest.LogCaptureFixture) -> None:
    sightings = Sightings()
    heard: list[tuple[str, int, str]] = []
    sightings.listeners.append(
        lambda stream, version, found: heard.append((stream, version, found.kind))
    )
    with caplog.at_level(logging.ERROR, logger="events.store.unreadable"):
        for _ in range(50):
            sightings.report("game:a", 3, NEWER)
            sightings.report("game:b", 7, GARBAGE)
    assert heard == [("game:a", 3, "newer"), ("game:b", 7, "garbage")]
    assert [r.getMessage().split(":")[0] for r in caplog.records] == [
        "event_unreadable stream=game",
        "event_unreadable stream=game",
    ]
    assert "kind=garbage" in caplog.records[1].getMessage()


def test_the_memory_of_rows_reported_is_bounded() -> None:
    sightings = Sightings(remembered=2)
    heard: list[int] = []
    sightings.listeners.append(lambda _stream, version, _found: heard.append(version))
    for version in (1, 2, 1, 3, 1, 2):  # 2 is forgotten once 1 and 3 came after it
        sightings.report("game:a", version, GARBAGE)
    assert heard == [1, 2, 3, 2]


def test_the_exception_names_the_stream_the_version_and_the_kind() -> None:
    raised = UnreadableEvent("game:a", 3, NEWER)
    assert str(raised).startswith("stream game:a version 3 (game.paused v1) is written by a newer")
    assert "undecodable" in str(UnreadableEvent("game:b", 7, GARBAGE))
