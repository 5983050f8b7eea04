"""`player.registered` grew `bot` and `tournament.created` grew `auto_rounds`, both with
defaults: rows stored before them read as a person and a tournament whose rounds wait for
the organiser; the new fields round-trip."""

from __future__ import annotations

import pytest

from events.codec import default_codec
from events.schema.common import GameOptions
from events.schema.tournament import PlayerRegistered, TournamentCreated

pytestmark = pytest.mark.unit


def test_players_and_tournaments_stored_before_bots_read_as_people_and_rounds_by_hand() -> None:
    codec = default_codec()
    old_player = b'{"type":"player.registered","name":"Ada","token_hash":"' + b"ab" * 32 + b'"}'
    assert codec.decode("player.registered", 1, old_player) == PlayerRegistered("Ada", "ab" * 32)
    old_tournament = (
        b'{"type":"tournament.created","name":"Cup","variant":"golf","options":{},'
        b'"table_size":4,"rounds":2,"seating":"swiss","duplicate":false,'
        b'"organiser_hash":"o","seed_anchor":"a"}'
    )
    created = codec.decode("tournament.created", 1, old_tournament)
    assert isinstance(created, TournamentCreated)
    assert created.auto_rounds is False


@pytest.mark.parametrize(
    "event",
    [
        PlayerRegistered("Robo", "", bot="greedy"),
        TournamentCreated(
            "Cup", "golf", GameOptions(), 4, 2, "swiss", True, "o" * 64, "a" * 64,
            auto_rounds=True,
        ),
    ],
    ids=lambda e: type(e).__name__,
)  # fmt: skip
def test_bot_players_and_rounds_by_themselves_round_trip(event: object) -> None:
    codec = default_codec()
    encoded = codec.encode(event)
    assert codec.decode(encoded.type, encoded.schema_version, encoded.data) == event
