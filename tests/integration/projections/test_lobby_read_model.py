"""The lobby read model, built by the projector from a real feed, agrees with the events
folded by the write side, for many random games, in every index and in every page."""

from __future__ import annotations

import pytest

from events.store import START, EmbeddedStore
from projections.lobby import STATUSES, LobbyProjection, index_name
from projections.projector import Projector
from projections.store import ProjectionStore
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
