"""The duplicate gate on a real store: a table's hands are shown to readers not seated at it
only as far as every other table of its round has played them, and the whole game (audit,
export, every replay) once every table has ended."""

from __future__ import annotations

import pytest

from events.schema.common import GameOptions, HandDealt
from events.store import EventStore
from service.contract.problems import ApiError
from service.ops.metrics import Metrics
from service.play.games import GameService
from service.tournaments.duplicate import DuplicateGate
from tests.support.duplicate_rounds import open_round, play

pytestmark = pytest.mark.integration

SEATING = [("ann", "bob"), ("cat", "dan"), ("eve", "fay")]


async def refused(call: object) -> str:
    """The problem code (with its status) a gate call refuses with, or "served"."""
    try:
        await call  # type: ignore[misc]
    except ApiError as error:
        return f"{error.status} {error.code}"
    return "served"


async def test_a_tables_hands_open_as_the_slowest_table_finishes_them(store: EventStore) -> None:
    games = GameService(store, Metrics())
    gate = DuplicateGate(games, refresh=0)
    played = await open_round(games, number=1, seed=b"\x01" * 32, seating=SEATING)
    a, b, c = played.tables
    await play(games, a)
    await play(games, b, actions=3)
    await play(games, c, hands=1)
    record = await games.load(a.game_id)
    assert record.finished

    # b is in hand 1: nothing of any deal is shown to a reader not seated at a
    first_deal = next(e.version for e in record.entries if isinstance(e.event, HandDealt))
    assert await gate.public_hands(a.game_id, played.ids) == 0
    assert await gate.sealed(record) == first_deal - 1
    assert await gate.visible(record, None, 0) == first_deal - 1
    assert await gate.visible(record, 0, 0) == record.version  # a's own seat sees it all
    assert await refused(gate.require_open(a.game_id, played.ids)) == "409 deals_to_come"
    assert await refused(gate.require_hand(a.game_id, 1)) == "409 deals_to_come"

    # b finishes hand 1 (c has): hand 1 is everyone's, hand 2 is not
    await play(games, b, hands=1)
    assert await gate.public_hands(a.game_id, played.ids) == 1
    assert await gate.sealed(record) == record.hand_ended_at[1]
    assert await refused(gate.require_hand(a.game_id, 1)) == "served"
    assert await refused(gate.require_hand(a.game_id, 2)) == "409 deals_to_come"

    # c, still in play, is never held back by tables that are over or ahead of it
    c_record = await games.load(c.game_id)
    assert await gate.sealed(c_record) == c_record.hand_ended_at[1]  # b is at hand 2 too
    await play(games, b)
    assert await gate.sealed(c_record) is None

    # a game over with a table still in play: never its chain secret (game.ended unseen)
    assert await gate.sealed(record) == record.hand_ended_at[1] < record.ended_at
    assert await refused(gate.require_open(a.game_id, played.ids)) == "409 deals_to_come"

    await play(games, c)
    assert await gate.sealed(record) is None
    assert await gate.visible(record, None, 0) == record.version
    assert await refused(gate.require_open(a.game_id, played.ids)) == "served"
    assert await refused(gate.require_hand(a.game_id, 2)) == "served"


async def test_a_peer_not_created_yet_has_played_nothing(store: EventStore) -> None:
    games = GameService(store, Metrics())
    gate = DuplicateGate(games, refresh=0)
    played = await open_round(games, number=1, seed=b"\x02" * 32, seating=SEATING[:1])
    missing = "0123456789abcdef"
    assert await gate.public_hands(played.ids[0], (*played.ids, missing)) == 0
    assert await gate.public_hands(played.ids[0], played.ids) is None  # alone: nothing hidden


async def test_a_game_dealt_on_its_own_is_never_held(store: EventStore) -> None:
    games = GameService(store, Metrics())
    gate = DuplicateGate(games, refresh=0)
    record, _ = await games.create("golf", 2, GameOptions(hands=1), "")
    assert await gate.sealed(record) is None
    assert await refused(gate.require_open(record.game_id, ())) == "served"


async def test_a_stale_record_of_a_peer_only_hides_more(store: EventStore) -> None:
    """Another instance's appends reach this one's cache only when it reads the store: the
    gate trusts a cached peer for `refresh` seconds, and a stale one shows it behind."""
    here, elsewhere = GameService(store, Metrics()), GameService(store, Metrics())
    gate = DuplicateGate(here, refresh=3600)
    played = await open_round(here, number=1, seed=b"\x03" * 32, seating=SEATING[:2])
    a, b = played.tables
    await play(here, a)
    assert await gate.public_hands(a.game_id, played.ids) == 0  # b read, and cached, here
    await play(elsewhere, b)
    assert await gate.public_hands(a.game_id, played.ids) == 0  # stale: still hidden
    assert await DuplicateGate(here, refresh=0).public_hands(a.game_id, played.ids) is None
