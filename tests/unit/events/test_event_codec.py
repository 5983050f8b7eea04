"""The codec: one encoder, one typed decoder, schema versions and upcasters, canonical bytes."""

from __future__ import annotations

import hashlib
import uuid
from typing import Any

import msgspec
import pytest
from hypothesis import given
from hypothesis import strategies as st

from events.codec import (
    GENESIS_HASH,
    MAX_EVENT_BYTES,
    MAX_METADATA_BYTES,
    Codec,
    CodecError,
    NewerEvent,
    UpcasterRegistry,
    canonical_bytes,
    chain_hash,
    default_codec,
)
from events.schema import EVENT_TYPES
from events.schema.common import GameEnded, GameOptions, GameStarted, HandDealt, HandEnded
from events.schema.lobby import GameCreated, GameRematched, SeatClaimed
from events.store.base import STREAM_ID_PATTERN, InvalidStreamId, check_stream_id

pytestmark = pytest.mark.unit

COMMON = (
    GameStarted("golf", 4, GameOptions(hands=9)),
    HandDealt(hand=1, dealer=2, seed="ab" * 32, commitment="cd" * 32),
    HandEnded(hand=1, reason="out", seed="ab" * 32, scores=(3, -2), totals=(3, -2)),
    GameEnded(totals=(10, 4), winners=(1,)),
)


class Scored(msgspec.Struct, frozen=True, tag="test.scored"):
    """Version 3 of a test event: v1 had `points`, v2 renamed it `score`, v3 added `bonus`."""

    seat: int
    score: int
    bonus: int


def versioned_codec() -> Codec:
    registry = UpcasterRegistry()

    @registry.register("test.scored", 1)
    def points_became_score(old: dict[str, Any]) -> dict[str, Any]:
        return {"type": old["type"], "seat": old["seat"], "score": old["points"]}

    @registry.register("test.scored", 2)
    def bonus_added(old: dict[str, Any]) -> dict[str, Any]:
        return {**old, "bonus": 0}

    return Codec((*EVENT_TYPES, Scored), registry)


@pytest.mark.parametrize("event", COMMON, ids=lambda e: type(e).__name__)
def test_every_common_event_round_trips(event: object) -> None:
    codec = default_codec()
    encoded = codec.encode(event)
    assert encoded.schema_version == 1
    assert msgspec.json.decode(encoded.data)["type"] == encoded.type
    assert codec.decode(encoded.type, encoded.schema_version, encoded.data) == event


def test_the_default_codec_knows_every_stored_event_type_and_is_built_once() -> None:
    assert default_codec() is default_codec()
    assert set(default_codec().event_types) == set(EVENT_TYPES)


def test_encoding_is_deterministic() -> None:
    codec = default_codec()
    event = COMMON[2]
    assert codec.encode(event).data == codec.encode(event).data
    assert codec.encode_metadata({"b": 1, "a": 2}) == b'{"a":2,"b":1}'


@pytest.mark.parametrize(
    ("event", "why"),
    [
        (GameStarted("golf", "four"), "malformed"),  # type: ignore[arg-type]
        (GameStarted("golf", 4, GameOptions(grab_min=0)), "malformed"),
        (GameStarted("g" * MAX_EVENT_BYTES, 4), "bytes"),
        (Scored(1, 2, 3), "unknown event type"),
        ("game.started", "unknown event type"),
    ],
)
def test_events_that_cannot_be_stored_are_refused(event: object, why: str) -> None:
    with pytest.raises(CodecError, match=why):
        default_codec().encode(event)


@pytest.mark.parametrize(
    ("metadata", "why"),
    [
        ({"x": object()}, "not JSON"),
        ({1: 2}, "string keys"),
        (["seat", 1], "mapping"),
        ({"x": "y" * MAX_METADATA_BYTES}, "bytes"),
    ],
)
def test_metadata_that_cannot_be_stored_is_refused(metadata: Any, why: str) -> None:
    with pytest.raises(CodecError, match=why):
        default_codec().encode_metadata(metadata)


def test_the_schema_version_follows_the_registered_upcasters() -> None:
    codec = versioned_codec()
    assert codec.schema_version("test.scored") == 3
    assert codec.schema_version("game.started") == 1
    assert codec.encode(Scored(1, 2, 3)).schema_version == 3


@pytest.mark.parametrize(
    ("version", "stored"),
    [
        (1, b'{"type":"test.scored","seat":2,"points":7}'),
        (2, b'{"type":"test.scored","seat":2,"score":7}'),
        (3, b'{"type":"test.scored","seat":2,"score":7,"bonus":0}'),
    ],
)
def test_old_shapes_are_upcast_to_the_current_one(version: int, stored: bytes) -> None:
    assert versioned_codec().decode("test.scored", version, stored) == Scored(2, 7, 0)


def test_a_version_newer_than_the_code_is_refused() -> None:
    with pytest.raises(CodecError, match="newer"):
        versioned_codec().decode("test.scored", 4, b'{"type":"test.scored"}')


def test_a_type_or_version_this_code_does_not_know_is_told_apart_from_garbage() -> None:
    """A newer release's row (unknown type, or a schema version past the newest known) is
    `NewerEvent`; a known type and version whose data does not decode is not."""
    codec = versioned_codec()
    with pytest.raises(NewerEvent, match=r"game\.paused v1 is newer"):
        codec.decode("game.paused", 1, b'{"type":"game.paused"}')
    with pytest.raises(NewerEvent, match=r"test\.scored v4 is newer"):
        codec.decode("test.scored", 4, b'{"type":"test.scored","seat":2,"score":7,"bonus":0}')
    for version, data in ((3, b'{"type":"test.scored","seat":"x"}'), (0, b"{}"), (3, b"[")):
        with pytest.raises(CodecError) as garbage:
            codec.decode("test.scored", version, data)
        assert not isinstance(garbage.value, NewerEvent)


def test_stored_data_of_another_type_is_refused() -> None:
    data = default_codec().encode(COMMON[0]).data
    with pytest.raises(CodecError, match=r"holds a game\.started"):
        default_codec().decode("game.ended", 1, data)
    with pytest.raises(CodecError, match="cannot decode"):
        default_codec().decode("game.started", 1, b'{"type":"game.started"}')


def test_upcaster_chains_must_start_at_1_without_gaps() -> None:
    registry = UpcasterRegistry()
    registry.register("test.scored", 2)(lambda old: old)
    with pytest.raises(ValueError, match="missing v1"):
        Codec((*EVENT_TYPES, Scored), registry)
    with pytest.raises(ValueError, match="exists"):
        registry.register("test.scored", 2)(lambda old: old)


def test_a_codec_needs_distinct_string_tags() -> None:
    class Untagged(msgspec.Struct):
        x: int

    class Again(msgspec.Struct, tag="game.started"):
        x: int

    class Odd(msgspec.Struct, tag="Game Started"):
        x: int

    with pytest.raises(ValueError, match="not a Struct tagged"):
        Codec((GameStarted, Untagged))
    with pytest.raises(ValueError, match="used twice"):
        Codec((GameStarted, Again))
    with pytest.raises(ValueError, match="does not match"):
        Codec((Odd,))


stream_ids = st.from_regex(STREAM_ID_PATTERN, fullmatch=True)
json_values = st.recursive(
    st.none() | st.booleans() | st.integers(-(2**53), 2**53) | st.text(),
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(), inner, max_size=3),
    max_leaves=8,
)


@given(
    stream_id=stream_ids,
    version=st.integers(1, 2**31 - 1),
    event=st.sampled_from(COMMON),
    metadata=st.dictionaries(st.text(), json_values, max_size=4),
)
def test_canonical_bytes_are_one_json_array_of_the_stored_fields(
    stream_id: str, version: int, event: object, metadata: dict[str, Any]
) -> None:
    codec = default_codec()
    encoded = codec.encode(event)
    meta = codec.encode_metadata(metadata)
    event_id = str(uuid.uuid4())

    canonical = canonical_bytes(
        stream_id, version, event_id, encoded.type, encoded.schema_version, encoded.data, meta
    )

    expected = [stream_id, version, event_id, encoded.type, encoded.schema_version]
    assert canonical == msgspec.json.encode(
        [*expected, msgspec.Raw(encoded.data), msgspec.Raw(meta)]
    )
    assert msgspec.json.decode(canonical)[:5] == expected


def test_the_chain_hashes_the_previous_hash_then_the_canonical_bytes() -> None:
    first = chain_hash(GENESIS_HASH, b"[1]")
    assert first == hashlib.sha256(bytes(32) + b"[1]").digest()
    assert chain_hash(first, b"[2]") == hashlib.sha256(first + b"[2]").digest()


@pytest.mark.parametrize("good", ["lobby", "game:0f3a", "tens-shedding:A_b-9", "a" * 63])
def test_plain_stream_ids_pass(good: str) -> None:
    assert check_stream_id(good) == good


@pytest.mark.parametrize("bad", ["", "Game", "game:", "game:a:b", "game:é", "game\n", "a" * 64])
def test_odd_stream_ids_fail(bad: str) -> None:
    with pytest.raises(InvalidStreamId):
        check_stream_id(bad)


def test_a_page_decodes_at_once_and_mixed_versions_still_upcast() -> None:
    codec = versioned_codec()
    current = codec.encode(COMMON[0]).data.decode()
    old = '{"type":"test.scored","seat":2,"points":7}'

    assert codec.decode_many(["game.started"] * 2, [1, 1], [current, current]) == [COMMON[0]] * 2
    assert codec.decode_many(["game.started", "test.scored"], [1, 1], [current, old]) == [
        COMMON[0],
        Scored(2, 7, 0),
    ]
    assert codec.decode_many_metadata(['{"a":1}', "{}"]) == [{"a": 1}, {}]


def test_a_page_with_a_bad_text_fails_even_when_the_texts_join_into_valid_json() -> None:
    codec = default_codec()
    one = codec.encode(COMMON[0]).data.decode()
    with pytest.raises(CodecError):
        codec.decode_many(["game.started"] * 2, [1, 1], [f"{one},{one}", one])
    with pytest.raises(CodecError):
        codec.decode_many_metadata(['{"a":1},{"b":2}', "{}"])


def test_an_upcaster_that_fails_is_a_codec_error() -> None:
    with pytest.raises(CodecError, match=r"upcasting test\.scored v1 failed"):
        versioned_codec().decode("test.scored", 1, b'{"type":"test.scored","seat":2}')


def test_seats_and_games_stored_before_bots_and_rematches_read_as_people_and_first_games() -> None:
    """`seat.claimed` grew `bot` and `game.created` grew `rematch_of` with defaults: rows
    stored before them read as a person's seat and a game that is no rematch."""
    codec = default_codec()
    old_seat = b'{"type":"seat.claimed","seat":1,"name":"ada","token_hash":"' + b"ab" * 32 + b'"}'
    assert codec.decode("seat.claimed", 1, old_seat) == SeatClaimed(1, "ada", "ab" * 32)
    assert codec.decode("seat.claimed", 1, old_seat).bot == ""
    old_game = b'{"type":"game.created","variant":"golf","seats":2,"options":{},"creator_hash":"c"}'
    assert codec.decode("game.created", 1, old_game).rematch_of == ""


@pytest.mark.parametrize(
    "event",
    [
        SeatClaimed(1, "greedy bot", "", bot="greedy"),
        GameCreated("golf", 2, GameOptions(), "c" * 64, rematch_of="0f" * 16),
        GameRematched("ab" * 16),
    ],
    ids=lambda e: type(e).__name__,
)
def test_bot_seats_and_rematch_links_round_trip(event: object) -> None:
    codec = default_codec()
    encoded = codec.encode(event)
    assert codec.decode(encoded.type, encoded.schema_version, encoded.data) == event
