"""The audit of a game with turns the service played for seats (`turn.played_for`): the
moves are decided again like any other and pass; a played-for event that names another
seat, another reason, or opens no move is a legality failure."""

from __future__ import annotations

from typing import Any

import msgspec
import pytest

from events.schema.lobby import SeatResigned, TurnPlayedFor
from events.stored import StoredRow
from service.audit import audit_game
from service.play.record import ACTION, PLAYED_FOR
from tests.support.histories import played, rows

pytestmark = pytest.mark.unit

GAME = "0123456789abcdef"


def with_played_for(variant: str, every: int = 3) -> list[tuple[Any, dict[str, Any]]]:
    """A whole game in which every `every`-th move was played for its seat: the move's
    events (and the deal appended with them) carry `played_for`, after a `turn.played_for`."""
    stored, _ = played(variant, 2, seed=5, kind="greedy")
    out: list[tuple[Any, dict[str, Any]]] = []
    moves = 0
    current: dict[str, Any] | None = None
    replaced: dict[str, Any] = {}
    for event, metadata in stored:
        if ACTION in metadata and metadata is not current:
            current = metadata
            moves += 1
            replaced = metadata
            if moves % every == 0:
                replaced = metadata | {PLAYED_FOR: "timeout"}
                out.append((TurnPlayedFor(metadata["seat"], "timeout"), replaced))
        out.append((event, replaced if metadata is current else metadata))
    return out


def retyped(history: list[StoredRow], version: int, **changes: Any) -> list[StoredRow]:
    """The rows with the data of `version` changed (hashes left: the chain check fails too,
    as it would for a forger without the chain; the legality check is what is looked at)."""
    row = history[version - 1]
    data = msgspec.json.decode(row.data) | changes
    history = list(history)
    history[version - 1] = msgspec.structs.replace(row, data=msgspec.json.encode(data).decode())
    return history


@pytest.mark.parametrize("variant", ["golf", "tens-shedding"])
def test_a_game_with_turns_played_for_seats_passes_the_audit(variant: str) -> None:
    stored = with_played_for(variant)
    assert sum(isinstance(e, TurnPlayedFor) for e, _ in stored) > 3
    report = audit_game(GAME, rows(GAME, stored))
    assert report.ok, [f.line() for f in report.failures]


def test_a_resigned_seat_is_lobby_to_the_audit() -> None:
    stored = with_played_for("golf")
    at = next(i for i, (e, _) in enumerate(stored) if isinstance(e, TurnPlayedFor))
    stored.insert(at, (SeatResigned(stored[at][0].seat, "resigned"), {"resigned": 0}))
    report = audit_game(GAME, rows(GAME, stored))
    assert report.ok, [f.line() for f in report.failures]


def test_a_played_for_that_names_another_seat_fails_the_legality_check() -> None:
    stored = with_played_for("golf")
    history = rows(GAME, stored)
    version = next(r.version for r in history if r.type == "turn.played_for")
    seat = msgspec.json.decode(history[version - 1].data)["seat"]
    report = audit_game(GAME, retyped(history, version, seat=1 - seat))
    assert not report.ok
    assert any(
        f.check == "legality" and f.version == version and f.field == "data.seat"
        for f in report.failures
    ), [f.line() for f in report.failures]


def test_a_played_for_with_another_reason_than_its_metadata_fails() -> None:
    stored = with_played_for("golf")
    history = rows(GAME, stored)
    version = next(r.version for r in history if r.type == "turn.played_for")
    report = audit_game(GAME, retyped(history, version, reason="resigned"))
    assert any(f.version == version and f.field == "data.reason" for f in report.failures)


def test_a_played_for_that_opens_no_move_fails() -> None:
    stored = with_played_for("golf")
    at = next(i for i, (e, _) in enumerate(stored) if isinstance(e, TurnPlayedFor))
    stray = (TurnPlayedFor(stored[at][0].seat, "timeout"), stored[at][1])
    stored.insert(at, stray)  # two in a row: the first is followed by no move
    history = rows(GAME, stored)
    report = audit_game(GAME, history)
    assert [f.field for f in report.failures if f.version == at + 1] == ["type"]


def test_a_tampered_move_played_for_a_seat_still_fails() -> None:
    """The move after a `turn.played_for` is decided again: a changed card is found."""
    stored = with_played_for("golf", every=1)
    history = rows(GAME, stored)
    version = next(
        r.version
        for r in history
        if r.type == "card.replaced" and PLAYED_FOR in msgspec.json.decode(r.metadata)
    )
    card = msgspec.json.decode(history[version - 1].data)["card"]
    report = audit_game(GAME, retyped(history, version, card="2C" if card != "2C" else "3C"))
    assert any(f.version == version and f.check in ("deck", "legality") for f in report.failures), [
        f.line() for f in report.failures
    ]
