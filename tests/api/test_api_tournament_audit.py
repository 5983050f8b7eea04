"""GET /tournaments/{id}/audit over HTTP: an honest duplicate tournament's report once it
has ended; 409 `tournament_in_play` before; 404 for no such tournament."""

from __future__ import annotations

from collections.abc import AsyncIterator, Iterator

import httpx
import pytest

from events.store import EventStore, PostgresStore
from service.ops.metrics import Metrics
from service.ops.settings import Settings
from service.play.games import GameService
from tests.api.server import running_server
from tests.support.duplicate_rounds import run_tournament

pytestmark = pytest.mark.api


@pytest.fixture(scope="module")
def api_base(keeperless_settings: Settings) -> Iterator[str]:
    """The tests append each round's `round.closed` themselves: no keeper may race them."""
    with running_server(keeperless_settings) as base:
        yield base


@pytest.fixture
async def games(keeperless_database: str) -> AsyncIterator[GameService]:
    store: EventStore = await PostgresStore.open(keeperless_database)
    try:
        yield GameService(store, Metrics())
    finally:
        await store.close()


async def test_an_ended_tournament_is_audited_and_one_in_play_is_refused(
    games: GameService, api_base: str
) -> None:
    ended = await run_tournament(games, rounds=1)
    going = await run_tournament(games, rounds=1, end=False)
    async with httpx.AsyncClient(base_url=api_base, timeout=30) as http:
        report = await http.get(f"/tournaments/{ended.tournament_id}/audit")
        assert report.status_code == 200, report.text
        body = report.json()
        assert body["ok"]
        assert body["duplicate"]
        assert body["failures"] == []
        assert {check["name"]: check["ok"] for check in body["checks"]} == dict.fromkeys(
            (
                "chain", "round_seeds", "seating", "round_chain", "seat_seeds", "decks",
                "travellers", "games",
            ),
            True,
        )  # fmt: skip
        boards = body["travellers"]
        assert boards
        assert {len(board["entries"]) for board in boards} == {len(ended.rounds[0].ids)}
        assert [t["game_id"] for t in body["tables"]] == list(ended.rounds[0].ids)

        refused = await http.get(f"/tournaments/{going.tournament_id}/audit")
        assert refused.status_code == 409
        assert refused.json()["code"] == "tournament_in_play"
        missing = await http.get("/tournaments/0000000000000000/audit")
        assert missing.status_code == 404
        assert missing.json()["code"] == "tournament_not_found"
        malformed = await http.get("/tournaments/NOPE/audit")
        assert malformed.status_code == 400
