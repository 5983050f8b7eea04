"""The lobby read model, built by the projector from a real feed, agrees with the events
folded by the write side, for many random games, in every index and in every page; and a
listing in play shows a delayed spectator the version and hand the game's record shows."""

from __future__ import annotations

import random
import uuid
from collections.abc import Sequence
from typing import Any

import pytest

from events.schema.common import GameStarted
from events.schema.lobby import GameCreated
from events.store import START, EmbeddedStore, NewEvent
from projections.lobby import HELD, STATUSES, LobbyProjection, as_seen, index_name
from projections.projector import Projector
from projections.store import ProjectionStore
from service.live.spectators import horizon
from service.play.record import GameRecord
from tests.support.lobby_oracle import expected_index, expected_listings
from tests.support.played_games import VARIANTS, append_interleaved, game_streams

pytestmark = pytest.mark.integration


async def all_members(store: ProjectionStore, index: str, limit: int) -> list[str]:
    members: list[str] = []
    cursor = None
    while True:
        page = await store.page("lobby", index, limit=limit, cursor=cursor, descending=True)
        members += [entry.member for entry in page.entries]
        cursor = page.next_cursor
        if cursor is None:
            return members


@pytest.mark.parametrize("seed", [1, 2])
async def test_the_lobby_agrees_with_the_events_for_many_random_games(
    pstore: ProjectionStore, feed: EmbeddedStore, seed: int
) -> None:
    await append_interleaved(feed, game_streams(70, seed), seed)
    projector = Projector([LobbyProjection()], pstore, feed, batch=97, grace=0)
    number = await projector.ensure(LobbyProjection())
    events = await feed.read_feed(START, limit=100_000)
    listings = expected_listings(events)
    assert len(listings) == 70
    assert {"lobby", "playing", "finished"} == {listing["status"] for listing in listings.values()}

    for game, listing in listings.items():
        assert await pstore.get("lobby", f"game:{game}") == listing
    generation = await pstore.generation("lobby", number)
    assert generation is not None
    assert generation.checkpoint == events[-1].checkpoint

    choices: list[tuple[str | None, str | None, bool | None]] = [(None, None, None)]
    choices += [(None, None, True), (None, None, False)]
    choices += [(None, status, None) for status in STATUSES]
    for variant, _, _ in VARIANTS:
        choices += [(variant, None, None), (variant, None, True), (variant, None, False)]
        choices += [(variant, status, None) for status in STATUSES]
    for variant, status, open_ in choices:
        expected = expected_index(listings, events, variant, status, open_)
        index = index_name(variant, status, open_)
        assert await all_members(pstore, index, 1000) == expected, index
        assert await all_members(pstore, index, 6) == expected, index


async def test_a_listing_holds_no_secret_of_the_events(
    pstore: ProjectionStore, feed: EmbeddedStore
) -> None:
    """Token hashes, seeds and cards are in the events; none reaches the lobby."""
    await append_interleaved(feed, game_streams(30, 5), 5)
    projector = Projector([LobbyProjection()], pstore, feed, grace=0)
    number = await projector.ensure(LobbyProjection())
    dumped = repr(await pstore.dump("lobby", number))
    events = await feed.read_feed(START, limit=100_000)
    secrets: set[str] = set()
    for event in events:
        for field in ("creator_hash", "token_hash", "seed", "commitment"):
            value = getattr(event.data, field, "")
            if isinstance(value, str) and len(value) >= 32:
                secrets.add(value)
    assert secrets
    assert not [secret for secret in secrets if secret in dumped]
    assert "cards" not in dumped
    assert "layout" not in dumped


async def append_as_played(
    store: EmbeddedStore, games: Sequence[tuple[str, list[Any]]], seed: int
) -> None:
    """Append each game as the service does: the lobby and the start without a seat in the
    metadata, then seat actions of one to four events, each naming its seat, games taking
    turns at random."""
    rng = random.Random(seed)
    pending = {}
    for stream, events in games:
        started = next((i for i, e in enumerate(events) if isinstance(e, GameStarted)), None)
        cut = len(events) if started is None else started + 2  # the start and its deal
        appends = [(events[:cut], {})]
        rest = events[cut:]
        while rest:
            size = rng.randint(1, 4)
            take, rest = rest[:size], rest[size:]
            appends.append((take, {"seat": rng.randrange(4)}))
        pending[stream] = appends
    versions = dict.fromkeys(pending, 0)
    while pending:
        stream = rng.choice(list(pending))
        events, metadata = pending[stream].pop(0)
        if events:
            batch = [NewEvent(uuid.uuid4(), event, metadata) for event in events]
            await store.append(stream, versions[stream], batch)
            versions[stream] += len(batch)
        if not pending[stream]:
            del pending[stream]


@pytest.mark.parametrize("batch", [1, 97])
async def test_a_listing_in_play_is_seen_as_far_as_the_spectator_delay_shows_the_game(
    pstore: ProjectionStore, feed: EmbeddedStore, batch: int
) -> None:
    """Given games appended as seat actions, then for every spectator delay the listing of
    a game shows the version and hand of the spectator's horizon as the game's own record
    counts it (service/live/spectators.py): exactly up to a delay of HELD actions, and no
    later past it; a game in its lobby or over is listed as it is."""
    await append_as_played(feed, game_streams(40, 11), 11)
    projector = Projector([LobbyProjection()], pstore, feed, batch=batch, grace=0)
    await projector.ensure(LobbyProjection())
    records: dict[str, GameRecord] = {}
    for event in await feed.read_feed(START, limit=100_000):
        game = event.stream_id.partition(":")[2]
        if isinstance(event.data, GameCreated):
            records[game] = GameRecord.begin(game, event.data)
        else:  # the append told apart as the service tells it (service/play/games.py)
            append = (event.recorded_at, event.metadata)
            records[game].apply(event.version, event.data, event.metadata, append=append)
    playing = [r for r in records.values() if r.started and not r.finished]
    assert len(playing) > 5
    assert any(len(r.action_starts) > HELD + 3 for r in playing)
    for game, record in records.items():
        listing = await pstore.get("lobby", f"game:{game}")
        assert listing is not None
        for delay in (0, 1, 2, 3, HELD - 1, HELD, HELD + 1, 40):
            seen = as_seen(listing, delay)
            version = horizon(record, delay)
            hand = record.entries[version - 1].hand
            if delay <= HELD or len(record.action_starts) <= HELD or record.finished:
                assert (seen["version"], seen["hand"]) == (version, hand), (game, delay)
            else:
                assert seen["version"] <= version, (game, delay)
                assert seen["hand"] <= hand, (game, delay)
