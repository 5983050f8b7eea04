"""Duplicate deals over HTTP: while another table of the round is still in play, no answer to
a reader not seated at a table holds a card or a seed of a hand that table has still to play,
on any path under /games/{id}; once every table has ended, everything is public as usual.

The rounds are built by hand (tests/support/duplicate_rounds.py) on the server's PostgreSQL
and played by the greedy bot; the readers go through the real server over HTTP. Every route
under /games/{id} is listed below with what a reader not seated at the table gets while the
round hides its hands: a new route fails `test_every_game_route_is_listed` until it is. And
every route served from a read model (its handler reads the projections) is listed with how
that read model keeps a table of a round in play from telling the others anything: a new
one fails `test_every_read_model_route_is_listed` until it is.
"""

from __future__ import annotations

import asyncio
import inspect
import time
from collections.abc import AsyncIterator
from typing import Any

import httpx
import pytest

from domain.cards import is_card
from events.schema.common import HandDealt
from events.schema.lobby import GameCreated
from events.store import EventStore, PostgresStore
from service.http.app import create_app
from service.ops.metrics import Metrics
from service.ops.settings import Settings
from service.play.games import GameService
from tests.api.sse import Stream
from tests.support.duplicate_rounds import Round, Table, open_round, play

pytestmark = pytest.mark.api

SEATING = [("ann", "bob"), ("cat", "dan")]

SEALED = "sealed"
"""Served as of the gate's version: nothing past it."""
REFUSED = "deals_to_come"
"""Refused whole with 409 `deals_to_come`."""
SEAT_ONLY = "seat only"
"""Needs a token of the game's own seat or creator: refused to anyone else."""
LOBBY = "lobby"
"""A lobby command: refused once the game has started."""

ROUTES: dict[tuple[str, str], str] = {
    ("GET", "/games/{game_id:str}"): SEALED,
    ("GET", "/games/{game_id:str}/view"): SEALED,
    ("GET", "/games/{game_id:str}/events"): SEALED,
    ("GET", "/games/{game_id:str}/scores"): SEALED,
    ("GET", "/games/{game_id:str}/scoreboard"): SEALED,
    ("GET", "/games/{game_id:str}/stream"): SEALED,
    ("GET", "/games/{game_id:str}/hands/{hand:int}/replay"): REFUSED,
    ("GET", "/games/{game_id:str}/audit"): REFUSED,
    ("POST", "/games/{game_id:str}/audit"): REFUSED,
    ("GET", "/games/{game_id:str}/export"): REFUSED,
    ("GET", "/games/{game_id:str}/me"): SEAT_ONLY,
    ("POST", "/games/{game_id:str}/actions"): SEAT_ONLY,
    ("POST", "/games/{game_id:str}/start"): SEAT_ONLY,
    ("PUT", "/games/{game_id:str}/seats/{seat:int}/seed"): SEAT_ONLY,
    ("DELETE", "/games/{game_id:str}/seats/{seat:int}"): SEAT_ONLY,
    ("POST", "/games/{game_id:str}/seats/{seat:int}/resign"): SEAT_ONLY,
    ("POST", "/games/{game_id:str}/seats/{seat:int}/bot"): SEAT_ONLY,
    ("POST", "/games/{game_id:str}/rematch"): SEAT_ONLY,
    ("POST", "/games/{game_id:str}/seats"): LOBBY,
}
HELD = "held"
"""A table's result counts only once its round closes (`round.closed`): until then the
table reads as in play and moves nothing (projections/players.py, projections/ratings.py;
tests/api/test_api_readmodels_duplicate.py)."""
HORIZON = "horizon"
"""The round's live tables shown only as far as every table still playing has got
(projections/standings.py `live_tables`; tests/unit/projections/test_standings_duplicate.py)."""
NO_SCORE = "no score"
"""Holds no card and no score (`test_the_lobby_listing_holds_no_card` below)."""

READ_MODELS: dict[tuple[str, str], str] = {
    ("GET", "/games"): NO_SCORE,
    ("GET", "/games/{game_id:str}/scoreboard"): SEALED,
    ("GET", "/games/{game_id:str}/hands/{hand:int}/replay"): REFUSED,
    ("GET", "/players/{name:str}"): HELD,
    ("GET", "/ratings"): HELD,
    ("GET", "/ratings/{name:str}"): HELD,
    ("GET", "/tournaments/{tournament_id:str}/standings"): HORIZON,
    ("GET", "/tournaments/{tournament_id:str}/standings/stream"): HORIZON,
    ("GET", "/tournaments/{tournament_id:str}/rounds/{number:int}/results"): HORIZON,
    ("GET", "/tournaments/{tournament_id:str}/rounds/{number:int}/travellers"): HORIZON,
}
"""Every route served from a read model, and how the read model holds a round's tables."""

BODIES: dict[str, Any] = {
    "/games/{game_id:str}/audit": {"receipts": []},
    "/games/{game_id:str}/actions": {"type": "flip", "row": 0, "col": 0},
    "/games/{game_id:str}/seats/{seat:int}/seed": {"seed": "mine"},
    "/games/{game_id:str}/seats": {"name": "late"},
    "/games/{game_id:str}/seats/{seat:int}/bot": {"level": "greedy"},
}


def game_routes() -> set[tuple[str, str]]:
    app = create_app(Settings())
    return {
        (method, route.path)
        for route in app.routes
        if route.path.startswith("/games/{game_id")
        for method in route.methods
        if method not in ("OPTIONS", "HEAD")
    }


def test_every_game_route_is_listed() -> None:
    """A route added under /games/{id} must say here what the duplicate gate does for it
    (and be swept by the tests below)."""
    assert game_routes() == set(ROUTES)


def read_model_routes() -> set[tuple[str, str]]:
    """Every route whose handler reads the projections (takes the `reader` dependency)."""
    app = create_app(Settings())
    return {
        (method, route.path)
        for route in app.routes
        for handler in getattr(route, "route_handlers", ())
        if "reader" in inspect.signature(handler.fn).parameters
        for method in handler.http_methods
        if method not in ("OPTIONS", "HEAD")
    }


def test_every_read_model_route_is_listed() -> None:
    """A route added that is served from a read model must say here how that read model
    holds a duplicate round's tables (and a game's own route agree with `ROUTES`)."""
    assert read_model_routes() == set(READ_MODELS)
    for route, kind in READ_MODELS.items():
        assert ROUTES.get(route, kind) == kind, route


@pytest.fixture
async def store(database_url: str) -> AsyncIterator[EventStore]:
    opened = await PostgresStore.open(database_url, poll_interval=0.2)
    try:
        yield opened
    finally:
        await opened.close()


@pytest.fixture
async def http(api_base: str) -> AsyncIterator[httpx.AsyncClient]:
    async with httpx.AsyncClient(base_url=api_base, timeout=30) as client:
        yield client


def secrets_of(games: GameService, game_id: str, first_hand: int) -> list[str]:
    """The seeds of hands `first_hand`.. and the chain secret, as stored: what a reader not
    seated at the table may not see while the round hides those hands."""
    slot = games.cache.get(game_id)
    assert slot is not None
    found: list[str] = []
    for entry in slot.record.entries:
        event = entry.event
        if isinstance(event, GameCreated):
            found.append(event.seed_secret)
        elif isinstance(event, HandDealt) and event.hand >= first_hand:
            found += [event.seed, event.server_seed]
    return [secret for secret in found if secret]


def cards_in(value: Any) -> list[str]:
    found, stack = [], [value]
    while stack:
        item = stack.pop()
        if isinstance(item, str) and is_card(item):
            found.append(item)
        elif isinstance(item, list):
            stack.extend(item)
        elif isinstance(item, dict):
            stack.extend(item.values())
    return found


def url(path: str, game_id: str, hand: int) -> str:
    """The route for the game, seat 0, and `hand`, the first hand the round hides."""
    filled = path.replace("{game_id:str}", game_id).replace("{seat:int}", "0")
    return filled.replace("{hand:int}", str(hand))


PROJECTED_WITHIN = 60.0
"""Seconds the read models have to project the round's games (appended straight to the
store here): a bound for a broken projector, not a timing."""


async def projected(http: httpx.AsyncClient, game_id: str, version: int) -> None:
    """Until the scoreboard read model shows a reader not seated the game as the gate lets
    it (`version`): the games are appended by hand and the projector follows a moment later
    (on a loaded machine the sweep could otherwise meet a game not in the scoreboard yet)."""
    deadline = time.monotonic() + PROJECTED_WITHIN
    while True:
        response = await http.get(f"/games/{game_id}/scoreboard")
        if response.status_code == 200 and response.json()["version"] == version:
            return
        assert time.monotonic() < deadline, (response.status_code, response.text[:300])
        await asyncio.sleep(0.05)


async def sweep(
    http: httpx.AsyncClient,
    base: str,
    table: Table,
    other: Table,
    version: int,
    hand: int,
    hidden: list[str],
) -> dict[tuple[str, str], Any]:
    """Every route as a reader not seated at `table`: anonymous, and holding a seat token of
    the other table, while the round hides hands `hand`.. of it. Each answer checked for
    what its route promises and for `hidden`."""
    await projected(http, table.game_id, version)
    bodies = {}
    for (method, path), kind in ROUTES.items():
        target = url(path, table.game_id, hand)
        for headers in ({}, {"Authorization": f"Bearer {other.tokens[0]}"}):
            if path.endswith("/stream"):
                if headers:
                    continue  # a seat token of another game: 401 as on /events (below)
                with Stream(base, target) as stream:
                    entries = stream.wait_for(version)
                    time.sleep(0.3)  # anything past the gate would follow at once
                    text = "\n".join(m.data for m in stream.messages)
                assert max(int(m.id or 0) for m in stream.messages) == version
                bodies[(method, path)] = entries
            else:
                response = await http.request(
                    method, target, headers=headers, json=BODIES.get(path)
                )
                text = response.text
                status = (method, path, response.status_code, text[:300])
                if kind == SEALED:
                    if headers and path.endswith(("/events", "/scoreboard")):  # take a seat token
                        assert response.status_code == 401, status
                    else:
                        assert response.status_code == 200, status
                        assert response.json()["version"] == version, path
                        bodies[(method, path)] = response.json()
                elif kind == REFUSED:
                    assert response.status_code == 409, status
                    assert response.json()["code"] == REFUSED
                elif kind == SEAT_ONLY:
                    assert response.status_code in (401, 403), status
                else:
                    assert response.status_code == 409, status
            for secret in hidden:
                assert secret not in text, (method, path)
    return bodies


async def the_round(games: GameService, seed: bytes) -> tuple[Round, Table, Table]:
    played = await open_round(games, number=1, seed=seed, seating=SEATING)
    a, b = played.tables
    await play(games, a)
    return played, a, b


async def test_nothing_of_a_deal_is_shown_while_another_table_plays_its_first_hand(
    store: EventStore, http: httpx.AsyncClient, api_base: str
) -> None:
    games = GameService(store, Metrics())
    _, a, b = await the_round(games, b"\x11" * 32)
    await play(games, b, actions=2)
    record = await games.load(a.game_id)
    before_deal = next(e.version for e in record.entries if isinstance(e.event, HandDealt)) - 1
    bodies = await sweep(http, api_base, a, b, before_deal, 1, secrets_of(games, a.game_id, 1))
    for (_, path), body in bodies.items():
        assert cards_in(body) == [], path  # no card at all: no hand is shown
    assert bodies[("GET", "/games/{game_id:str}/scores")]["hands"] == []
    assert bodies[("GET", "/games/{game_id:str}/scoreboard")]["hands"] == []

    # the table's own seat sees its game whole
    mine = await http.get(
        f"/games/{a.game_id}/events", headers={"Authorization": f"Bearer {a.tokens[1]}"}
    )
    assert mine.json()["version"] == record.version
    assert any(secret in mine.text for secret in secrets_of(games, a.game_id, 1))


async def test_a_hand_every_table_has_finished_is_public_and_the_rest_opens_at_the_end(
    store: EventStore, http: httpx.AsyncClient, api_base: str
) -> None:
    games = GameService(store, Metrics())
    _, a, b = await the_round(games, b"\x12" * 32)
    await play(games, b, hands=1)
    record = await games.load(a.game_id)
    bodies = await sweep(
        http, api_base, a, b, record.hand_ended_at[1], 2, secrets_of(games, a.game_id, 2)
    )
    events = bodies[("GET", "/games/{game_id:str}/events")]["events"]
    assert [e["event"]["type"] for e in events].count("hand.ended") == 1
    assert cards_in(events)  # hand 1's cards, every table's past now
    replay = await http.get(f"/games/{a.game_id}/hands/1/replay")
    assert replay.status_code == 200

    # a spectator's stream held at the gate goes on once the last table ends, to the end
    with Stream(api_base, f"/games/{a.game_id}/stream") as stream:
        stream.wait_for(record.hand_ended_at[1])
        await play(games, b)
        stream.wait_for(record.version)
        stream.ended.wait(30)
        assert stream.ended_cleanly
    for path in ("export", "audit", "hands/2/replay", "events"):
        response = await http.get(f"/games/{a.game_id}/{path}")
        assert response.status_code == 200, (path, response.text)
    audit = (await http.get(f"/games/{a.game_id}/audit")).json()
    assert audit["ok"], audit
    feed = (await http.get(f"/games/{a.game_id}/events")).text
    assert all(secret in feed for secret in secrets_of(games, a.game_id, 1))


async def test_the_lobby_listing_holds_no_card(store: EventStore, http: httpx.AsyncClient) -> None:
    games = GameService(store, Metrics())
    _, a, _ = await the_round(games, b"\x13" * 32)
    listing = await http.get("/games", params={"limit": 200})
    assert listing.status_code in (200, 503), listing.text
    if listing.status_code == 200:
        assert cards_in(listing.json()) == []
        for secret in secrets_of(games, a.game_id, 1):
            assert secret not in listing.text
