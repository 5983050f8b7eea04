"""The lobby projection as a pure function: given a game's events, these writes."""

from __future__ import annotations

import uuid
from datetime import UTC, datetime, timedelta, timezone

import pytest

from events.schema.common import GameEnded, GameOptions, GameStarted, HandDealt, HandEnded
from events.schema.lobby import GameCreated, SeatClaimed, SeatReleased
from events.store import RecordedEvent
from projections.base import Doc, IndexAdd, IndexRemove, Put
from projections.lobby import LobbyProjection, Moment, index_name, indexes, score
from projections.store import Changes

pytestmark = pytest.mark.unit

T0 = datetime(2026, 11, 23, 5, 0, tzinfo=UTC)
LOBBY = LobbyProjection()


def recorded(stream: str, version: int, data: object, seconds: int = 0) -> RecordedEvent:
    return RecordedEvent(
        global_position=version,
        tx_id=version,
        stream_id=stream,
        version=version,
        event_id=uuid.uuid4(),
        type="x",
        schema_version=1,
        data=data,
        metadata={},
        recorded_at=T0 + timedelta(seconds=seconds),
        hash=b"",
    )


def play(*events: object, stream: str = "game:abc") -> tuple[Doc | None, Changes]:
    """Apply `events` in order (versions 1, 2, ...), as the runner would."""
    docs: dict[str, Doc | None] = {}
    changes = Changes()
    for version, data in enumerate(events, start=1):
        event = recorded(stream, version, data, seconds=version)
        for write in LOBBY.apply(event, {k: docs.get(k) for k in LOBBY.keys(event)}):
            changes.add(write)
            if isinstance(write, Put):
                docs[write.key] = write.doc
    return docs.get("game:abc"), changes


CREATED = GameCreated("golf", 2, GameOptions(), "secret-creator-hash", "Friday")


def test_a_created_game_is_listed_in_its_lobby_with_every_seat_free() -> None:
    listing, changes = play(CREATED)
    assert listing == {
        "game_id": "abc",
        "variant": "golf",
        "title": "Friday",
        "seats": [{"seat": 0, "name": None}, {"seat": 1, "name": None}],
        "free_seats": [0, 1],
        "status": "lobby",
        "hand": 0,
        "version": 1,
        "created_at": (T0 + timedelta(seconds=1)).isoformat(),
        "updated_at": (T0 + timedelta(seconds=1)).isoformat(),
    }
    at = score(T0 + timedelta(seconds=1))
    assert changes.index == {
        (name, "abc"): at
        for name in (
            "all",
            "status:lobby",
            "open",
            "variant:golf",
            "variant:golf:status:lobby",
            "variant:golf:open",
        )
    }


def test_claims_and_releases_name_the_seats_and_a_full_game_is_no_longer_open() -> None:
    listing, changes = play(
        CREATED,
        SeatClaimed(0, "Ada", "h0"),
        SeatClaimed(1, "Bo", "h1"),
        SeatReleased(0),
        SeatClaimed(0, "Cy", "h2"),
    )
    assert listing is not None
    assert listing["seats"] == [{"seat": 0, "name": "Cy"}, {"seat": 1, "name": "Bo"}]
    assert listing["free_seats"] == []
    assert listing["version"] == 5
    assert changes.index[("open", "abc")] is None
    assert changes.index[("variant:golf:open", "abc")] is None
    assert changes.index[("closed", "abc")] == score(T0 + timedelta(seconds=5))
    assert changes.index[("variant:golf:closed", "abc")] == score(T0 + timedelta(seconds=5))
    assert changes.index[("status:lobby", "abc")] == score(T0 + timedelta(seconds=5))


def test_a_started_game_moves_to_playing_counts_hands_and_ends_finished() -> None:
    claims = (SeatClaimed(0, "Ada", "h0"), SeatClaimed(1, "Bo", "h1"))
    started = GameStarted("golf", 2)
    dealt = HandDealt(1, 0, "", "c" * 64)
    listing, changes = play(CREATED, *claims, started, dealt)
    assert listing is not None
    assert (listing["status"], listing["hand"]) == ("playing", 1)
    assert changes.index[("status:lobby", "abc")] is None
    assert ("status:playing", "abc") in changes.index
    ended = (HandEnded(1, "went_out", "s" * 64, (3, 4), (3, 4)), GameEnded((3, 4), (0,)))
    listing, changes = play(CREATED, *claims, started, dealt, *ended)
    assert listing is not None
    assert (listing["status"], listing["hand"], listing["version"]) == ("finished", 1, 7)
    assert changes.index[("status:playing", "abc")] is None
    assert changes.index[("variant:golf:status:finished", "abc")] == score(
        T0 + timedelta(seconds=7)
    )


def test_a_listing_never_holds_a_token_hash_a_seed_or_a_commitment() -> None:
    events = (CREATED, SeatClaimed(0, "Ada", "token-hash-0"), GameStarted("golf", 2))
    listing, _ = play(*events, HandDealt(1, 0, "seed" * 16, "commit" * 10))
    assert listing is not None
    text = repr(listing)
    for secret in ("secret-creator-hash", "token-hash-0", "seed" * 16, "commit" * 10):
        assert secret not in text


def test_events_of_other_streams_and_games_never_created_write_nothing() -> None:
    assert LOBBY.keys(recorded("lobby", 1, CREATED)) == ()
    assert LOBBY.apply(recorded("tournament:t1", 1, CREATED), {}) == ()
    orphan = recorded("game:zzz", 2, SeatClaimed(0, "Ada", "h"))
    assert LOBBY.apply(orphan, {"game:zzz": None}) == ()


def test_the_given_listing_is_never_changed_in_place() -> None:
    listing, _ = play(CREATED)
    assert listing is not None
    before = repr(listing)
    event = recorded("game:abc", 2, SeatClaimed(0, "Ada", "h"))
    writes = LOBBY.apply(event, {"game:abc": listing})
    assert repr(listing) == before
    assert isinstance(writes[0], Put)
    assert writes[0].doc["seats"][0]["name"] == "Ada"


def test_index_names_and_memberships() -> None:
    assert index_name() == "all"
    assert index_name("tens") == "variant:tens"
    assert index_name(status="playing") == "status:playing"
    assert index_name("tens", "finished") == "variant:tens:status:finished"
    assert index_name("tens", open_=True) == "variant:tens:open"
    assert index_name(open_=False) == "closed"
    assert index_name("tens", "lobby", open_=False) == "variant:tens:closed"
    assert indexes(None) == ()
    assert not isinstance(IndexRemove("i", "m"), IndexAdd)


def test_a_moment_is_formatted_once_for_a_run_and_anew_for_another_time_or_zone() -> None:
    moment = Moment()
    at = datetime(2026, 11, 23, 6, 30, 1, 250_000, tzinfo=UTC)
    first = moment.of(at)
    assert first == (at.isoformat(), score(at))
    assert moment.of(at.replace()) == first  # an equal time, another object
    later = at + timedelta(microseconds=1)
    assert moment.of(later) == (later.isoformat(), score(later))
    elsewhere = at.astimezone(timezone(timedelta(hours=1)))  # the same instant, another zone
    assert elsewhere == at
    assert moment.of(elsewhere) == (elsewhere.isoformat(), score(at))
    assert moment.of(elsewhere)[0].endswith("+01:00")
