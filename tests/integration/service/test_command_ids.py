"""The event ids a command derives, pinned: a request retried after an upgrade must land on
the events its first attempt stored, so the namespaces and names below never change. Each
expectation is written out here, apart from the code that derives it."""

from __future__ import annotations

import hashlib
import hmac
import random
import uuid
from datetime import UTC, datetime

import pytest

from events.schema.common import GameOptions
from events.store import EventStore
from service.ops.metrics import Metrics
from service.play.games import GameService, stream_id
from service.tournaments.service import TournamentService
from tests.support.tournaments import tournament_spec

pytestmark = pytest.mark.integration

GAMES = uuid.UUID("6f1c3a52-6a55-4d0b-9d0e-0a7f3b2c9e11")
TOURNAMENTS = uuid.UUID("0b6f6d7e-3c0a-4f55-9a63-5d1e2f7c4b90")


def digest(key: str) -> str:
    return hashlib.sha256(b"fairway idempotency key\x00" + key.encode()).hexdigest()


def derived_id(*parts: str) -> str:
    message = "\x00".join(parts).encode()
    return hmac.new(b"fairway game-id", message, hashlib.sha256).hexdigest()[:16]


def ids(namespace: uuid.UUID, base: str, count: int) -> list[uuid.UUID]:
    return [uuid.uuid5(namespace, f"{base}|{i}") for i in range(count)]


async def test_a_games_commands_derive_their_event_ids_as_they_always_have(
    store: EventStore,
) -> None:
    games = GameService(store, Metrics())
    record, creator = await games.create(
        "golf", 2, GameOptions(hands=1), "ids", key="create key 000001"
    )
    game_id = record.game_id
    assert game_id == derived_id("create key 000001")
    _, _, ann = await games.claim(game_id, 0, "ann", "claim key 0000001")
    _, _, bob = await games.claim(game_id, 1, "bob", "claim key 0000002")
    await games.set_seed(game_id, ann, 0, "ann's seed", "seed key 00000001")
    await games.start(game_id, creator, "start key 0000001")
    tokens = [ann, bob]
    record = await games.load(game_id)
    assert record.decider is not None
    seat = record.decider.status(record.state).to_act[0]
    legal = record.decider.legal_actions(record.state, seat)
    action = record.decider.pick(legal[0], random.Random(0))
    acted = await games.act(
        game_id, tokens[seat], action, idempotency_key="act key 00000001", request_hash="h"
    )
    record = acted.record
    assert record.decider is not None
    due = record.decider.status(record.state).to_act[0]
    await games.resign(game_id, tokens[due], due)
    resigned_at = (await games.load(game_id)).version
    now = datetime.now(UTC)
    assert await games.play_for(game_id, due, "resigned", resigned_at, now, now) is not None

    rows = await store.read_stream(stream_id(game_id))
    by_append: dict[str, list[uuid.UUID]] = {}
    for row in rows:
        by_append.setdefault(f"{row.metadata.get('idempotency_scope')}", []).append(row.event_id)
    assert rows[0].event_id == uuid.uuid5(GAMES, f"create|{digest('create key 000001')}")
    claims = [rows[1].event_id, rows[2].event_id]
    assert claims == [
        *ids(GAMES, f"{game_id}|claim|{digest('claim key 0000001')}", 1),
        *ids(GAMES, f"{game_id}|claim|{digest('claim key 0000002')}", 1),
    ]
    assert by_append["seed:0"] == ids(GAMES, f"{game_id}|seed:0|seed key 00000001", 1)
    start = by_append["start"]
    assert start == ids(GAMES, f"{game_id}|start|start key 0000001", len(start))
    played = [row.event_id for row in rows if row.metadata.get("played_for") == "resigned"]
    base = f"played-for|{game_id}|{resigned_at}|{due}"
    assert played == ids(GAMES, base, len(played))
    act = [row.event_id for row in rows[acted.first_version - 1 : acted.last_version]]
    assert act == ids(GAMES, f"{game_id}|seat:{seat}|act key 00000001", len(act))


async def test_a_tournaments_commands_derive_their_event_ids_as_they_always_have(
    store: EventStore,
) -> None:
    games = GameService(store, Metrics())
    tournaments = TournamentService(store, games, Metrics())
    spec = tournament_spec(name="ids", table_size=2, rounds=1, duplicate=False)
    record, organiser = await tournaments.create(spec, None, key="tournament key 01")
    tournament_id = record.tournament_id
    assert tournament_id == derived_id("tournament", "tournament key 01")
    for name, key in (("ann", "register key 0001"), ("bob", "register key 0002")):
        await tournaments.register(tournament_id, organiser, name, key)
    started = await tournaments.start_round(tournament_id, organiser, "round key 0000001")

    rows = await store.read_stream(f"tournament:{tournament_id}")
    assert [row.event_id for row in rows] == [
        uuid.uuid5(TOURNAMENTS, f"create|{digest('tournament key 01')}"),
        *ids(TOURNAMENTS, f"{tournament_id}|organiser|{digest('register key 0001')}", 1),
        *ids(TOURNAMENTS, f"{tournament_id}|organiser|{digest('register key 0002')}", 1),
        *ids(TOURNAMENTS, f"{tournament_id}|organiser|round key 0000001", 1),
    ]
    (table,) = started.record.state.rounds[-1].started.tables
    opened = await store.read_stream(stream_id(table.game_id))
    assert [row.event_id for row in opened] == ids(
        GAMES, f"{table.game_id}|open-table", len(opened)
    )
