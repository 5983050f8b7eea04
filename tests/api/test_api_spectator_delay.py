"""FAIRWAY_SPECTATOR_DELAY: spectators see the game N seat actions behind on every read path
(summary, view, events, scores, scoreboard, stream, the lobby, the replay, the audit), seats
see it live, and a finished game is shown whole.

The oracle counts the actions the test itself takes: a spectator's horizon is the version
the game stood at before the N-th most recent of them. The view it should see is folded by
the domain from the events stored in PostgreSQL up to that version.

Every route of the service is listed below with how the delay holds on it: a new route fails
`test_every_route_says_how_the_spectator_delay_holds_on_it` until it is listed, and each
route of a kind that shows a game is swept by `sweep` at every step of a game."""

from __future__ import annotations

import random
import time
from collections.abc import Iterator
from typing import Any

import httpx
import msgspec
import psycopg
import pytest

from domain.variants import fold
from events.codec import default_codec
from events.schema.common import GameStarted
from service.http.app import create_app
from service.ops.settings import Settings
from tests.api.players import Table, concrete, open_table
from tests.api.server import running_server
from tests.api.sse import Stream

pytestmark = pytest.mark.api

DELAY = 2
CODEC = default_codec()


@pytest.fixture(scope="module")
def delayed(api_settings: Settings) -> Iterator[str]:
    with running_server(msgspec.structs.replace(api_settings, spectator_delay=DELAY)) as base:
        yield base


def spectator_view_at(database_url: str, game_id: str, version: int) -> Any:
    with psycopg.connect(database_url, autocommit=True) as conn:
        rows = conn.execute(
            "SELECT type, schema_version, data::text FROM events WHERE stream_id = %s "
            "AND stream_version <= %s ORDER BY stream_version",
            (f"game:{game_id}", version),
        ).fetchall()
    events = [CODEC.decode(kind, schema, data) for kind, schema, data in rows]
    started = next(i for i, e in enumerate(events) if isinstance(e, GameStarted))
    decider, state = fold(events[started:])
    as_json = msgspec.json.decode(
        msgspec.json.encode((decider.view(state, None), decider.status(state)))
    )
    return as_json[0], as_json[1]


def check_spectator_paths(
    http: httpx.Client, table: Table, horizon: int, database_url: str, stream: Stream
) -> int:
    """Checks each path at `horizon`; returns it (what the stream has been compared up to)."""
    game = f"/games/{table.game_id}"
    summary = http.get(game)
    assert summary.json()["version"] == horizon
    assert summary.headers["etag"] == f'"{horizon}"'
    assert http.get(game, headers={"If-None-Match": f'"{horizon}"'}).status_code == 304

    public = http.get(f"{game}/view").json()
    assert public["version"] == horizon
    view, status = spectator_view_at(database_url, table.game_id, horizon)
    assert public["view"] == view
    assert public["status"] == status
    assert summary.json()["status"] == status

    events = http.get(f"{game}/events", params={"limit": 1000}).json()
    assert events["version"] == horizon
    assert [e["version"] for e in events["events"]] == list(range(1, horizon + 1))
    assert http.get(f"{game}/events", params={"after": horizon}).json()["events"] == []

    scores = http.get(f"{game}/scores").json()
    assert scores["version"] == horizon
    assert scores["totals"] == status["totals"]

    streamed = stream.wait_for(horizon)
    assert [e["version"] for e in streamed] == list(range(1, horizon + 1)), "not past the horizon"
    # Sent as it became visible, each event as the feed shows it at the same horizon (less
    # the fields only the feed reads from the store: event id, time, metadata).
    store_only = dict.fromkeys(("event_id", "recorded_at", "metadata"))
    fed = [entry | store_only for entry in events["events"]]
    assert streamed[stream.compared :] == fed[stream.compared :]
    stream.compared = horizon
    return horizon


def test_spectators_see_the_game_n_actions_behind_on_every_path_and_seats_see_it_live(
    delayed: str, database_url: str
) -> None:
    with httpx.Client(base_url=delayed, timeout=20) as http:
        table = open_table(http, "golf", 2, {"hands": 1, "turn_limit": 3})
        rng = random.Random(17)
        version = int(
            http.get(f"/games/{table.game_id}/events", headers=table.auth(0)).json()["version"]
        )
        before_actions: list[int] = []
        path = f"/games/{table.game_id}/stream"
        with Stream(delayed, path) as stream:
            check_spectator_paths(http, table, version, database_url, stream)
            for _ in range(300):
                seat = table.me(0)["status"]["to_act"][0]
                action = concrete(rng.choice(table.me(seat)["legal_actions"]), rng)
                answer = table.act(seat, action)
                assert answer.status_code == 200, answer.text
                before_actions.append(version)
                version = answer.json()["version"]
                if answer.json()["status"]["phase"] == "game_over":
                    break
                horizon = before_actions[max(0, len(before_actions) - DELAY)]
                check_spectator_paths(http, table, horizon, database_url, stream)
                for seat_viewer in (0, 1):  # seats are never held back
                    mine = http.get(f"/games/{table.game_id}/me", headers=table.auth(seat_viewer))
                    assert mine.json()["version"] == version
                    feed = http.get(
                        f"/games/{table.game_id}/events", headers=table.auth(seat_viewer)
                    )
                    assert feed.json()["version"] == version
            else:
                pytest.fail("the game did not end")
            # Over: everything is shown, to spectators too.
            check_spectator_paths(http, table, version, database_url, stream)
            assert len(before_actions) > DELAY


HELD = "held"
"""Its `version` is the spectator's, as GET /games/{id} says it (a read model's may trail)."""
LISTED = "listed"
"""The lobby: the game's listing has the spectator's `version` and `hand`."""
HAND_SEEN = "hand seen"
"""A hand is replayed once it is over at the spectator's version; before, 409 hand_in_play."""
AUDITED = "audited"
"""The audit of the history through the spectator's version (`chain.version`)."""
OVER_ONLY = "over only"
"""Shown only once the game is over (409 game_in_play before), and then whole."""
SEAT_ONLY = "seat only"
"""Needs the token of a seat or of the creator: a spectator is refused."""
LOBBY = "lobby"
"""A lobby command: refused once the game has started."""
NO_GAME = "no game"
"""Shows no game's progress: operations, documents, variants, a game's result once over
(players, ratings), a tournament's own history (rounds, seeds, players: not its games')."""
NOT_HELD = "not held"
"""Shows the hands of a tournament's live round as each table ends them (totals, hands,
links to their replays), not held back by the spectator delay: a known gap, reported."""

ROUTES: dict[tuple[str, str], str] = {
    ("GET", "/games/{game_id:str}"): HELD,
    ("GET", "/games/{game_id:str}/view"): HELD,
    ("GET", "/games/{game_id:str}/events"): HELD,
    ("GET", "/games/{game_id:str}/scores"): HELD,
    ("GET", "/games/{game_id:str}/scoreboard"): HELD,
    ("GET", "/games/{game_id:str}/stream"): HELD,
    ("GET", "/games"): LISTED,
    ("GET", "/games/{game_id:str}/hands/{hand:int}/replay"): HAND_SEEN,
    ("GET", "/games/{game_id:str}/audit"): AUDITED,
    ("POST", "/games/{game_id:str}/audit"): AUDITED,
    ("GET", "/games/{game_id:str}/export"): OVER_ONLY,
    ("GET", "/games/{game_id:str}/me"): SEAT_ONLY,
    ("POST", "/games/{game_id:str}/actions"): SEAT_ONLY,
    ("POST", "/games/{game_id:str}/start"): SEAT_ONLY,
    ("PUT", "/games/{game_id:str}/seats/{seat:int}/seed"): SEAT_ONLY,
    ("DELETE", "/games/{game_id:str}/seats/{seat:int}"): SEAT_ONLY,
    ("POST", "/games/{game_id:str}/seats/{seat:int}/resign"): SEAT_ONLY,
    ("POST", "/games/{game_id:str}/seats/{seat:int}/bot"): SEAT_ONLY,
    ("POST", "/games/{game_id:str}/rematch"): SEAT_ONLY,
    ("POST", "/games/{game_id:str}/seats"): LOBBY,
    ("POST", "/games"): NO_GAME,
    ("GET", "/players/{name:str}"): NO_GAME,
    ("GET", "/ratings"): NO_GAME,
    ("GET", "/ratings/{name:str}"): NO_GAME,
    ("GET", "/projections"): NO_GAME,
    ("GET", "/health"): NO_GAME,
    ("GET", "/ready"): NO_GAME,
    ("GET", "/metrics"): NO_GAME,
    ("GET", "/variants"): NO_GAME,
    ("GET", "/variants/{variant:str}"): NO_GAME,
    ("POST", "/variants/{variant:str}/score"): NO_GAME,
    ("GET", "/.well-known/fairway-receipt-key"): NO_GAME,
    ("GET", "/docs"): NO_GAME,
    ("GET", "/"): NO_GAME,
    ("GET", "/play/{game_id:str}"): NO_GAME,
    ("GET", "/watch/{game_id:str}"): NO_GAME,
    ("GET", "/replay/{game_id:str}"): NO_GAME,
    ("GET", "/standings/{tournament_id:str}"): NO_GAME,
    ("GET", "/organise"): NO_GAME,
    ("GET", "/verify"): NO_GAME,
    ("GET", "/static/{name:str}"): NO_GAME,
    ("GET", "/schema"): NO_GAME,
    ("GET", "/schema/assets/{file_path:path}"): NO_GAME,
    ("GET", "/schema/oauth2-redirect.html"): NO_GAME,
    ("GET", "/schema/openapi.json"): NO_GAME,
    ("GET", "/schema/swagger"): NO_GAME,
    ("GET", "/schema/{path:str}"): NO_GAME,
    ("POST", "/tournaments"): NO_GAME,
    ("GET", "/tournaments/{tournament_id:str}"): NO_GAME,
    ("GET", "/tournaments/{tournament_id:str}/events"): NO_GAME,
    ("GET", "/tournaments/{tournament_id:str}/audit"): NO_GAME,
    ("POST", "/tournaments/{tournament_id:str}/players"): NO_GAME,
    ("PUT", "/tournaments/{tournament_id:str}/players/{name:str}/seed"): NO_GAME,
    ("POST", "/tournaments/{tournament_id:str}/players/{name:str}/withdraw"): NO_GAME,
    ("POST", "/tournaments/{tournament_id:str}/rounds"): NO_GAME,
    ("GET", "/tournaments/{tournament_id:str}/standings"): NOT_HELD,
    ("GET", "/tournaments/{tournament_id:str}/standings/stream"): NOT_HELD,
    ("GET", "/tournaments/{tournament_id:str}/rounds/{number:int}/results"): NOT_HELD,
    ("GET", "/tournaments/{tournament_id:str}/rounds/{number:int}/travellers"): NOT_HELD,
}
BODIES: dict[str, Any] = {
    "/games/{game_id:str}/audit": {"receipts": []},
    "/games/{game_id:str}/actions": {"type": "flip", "row": 0, "col": 0},
    "/games/{game_id:str}/seats/{seat:int}/seed": {"seed": "mine"},
    "/games/{game_id:str}/seats": {"name": "late"},
    "/games/{game_id:str}/seats/{seat:int}/bot": {"level": "greedy"},
}


def every_route() -> set[tuple[str, str]]:
    app = create_app(Settings())
    return {
        (method, route.path)
        for route in app.routes
        for method in route.methods  # type: ignore[attr-defined]
        if method not in ("OPTIONS", "HEAD")
    }


def test_every_route_says_how_the_spectator_delay_holds_on_it() -> None:
    """A route added anywhere must say here whether it shows a game's progress to a reader
    without a seat token, and how the delay holds on it (and be swept below)."""
    assert every_route() == set(ROUTES)


def read_model_at(http: httpx.Client, target: str, horizon: int, **request: Any) -> Any:
    """The answer once it has reached `horizon`: a read model may trail the game, but no
    answer may be past it."""
    deadline = time.monotonic() + 60
    while True:
        response = http.get(target, **request)
        assert response.status_code in (200, 503), (target, response.text)
        if response.status_code == 200:
            body = response.json()
            version = body["version"]
            assert version <= horizon, f"{target} shows version {version}, past {horizon}"
            if version == horizon:
                return body
        assert time.monotonic() < deadline, f"{target} did not reach version {horizon}"
        time.sleep(0.05)


def listed_at(http: httpx.Client, game_id: str, horizon: int) -> dict[str, Any]:
    """The game's lobby listing once it has reached `horizon`, never past it."""
    deadline = time.monotonic() + 60
    while True:
        page = http.get("/games", params={"variant": "golf", "limit": 200})
        assert page.status_code in (200, 503), page.text
        found = (
            [g for g in page.json()["games"] if g["game_id"] == game_id] if page.is_success else []
        )
        if found:
            assert found[0]["version"] <= horizon, (
                f"listed at {found[0]['version']}, past {horizon}"
            )
            if found[0]["version"] == horizon:
                return found[0]
        assert time.monotonic() < deadline, f"the listing of {game_id} did not reach {horizon}"
        time.sleep(0.05)


def sweep(http: httpx.Client, base: str, table: Table, horizon: int, ended: dict[int, int]) -> None:
    """Every route that shows the game, as a spectator (no token) at `horizon`, and as a seat
    where a token is taken; `ended`: the version each hand ended at, live."""
    live = http.get(f"/games/{table.game_id}/events", headers=table.auth(0)).json()["version"]
    summary = http.get(f"/games/{table.game_id}").json()
    assert summary["version"] == horizon
    over = summary["status"]["phase"] == "game_over"
    for (method, path), kind in ROUTES.items():
        target = path.replace("{game_id:str}", table.game_id).replace("{seat:int}", "0")
        body = BODIES.get(path)
        if kind == HELD and path.endswith("/stream"):
            with Stream(base, target) as stream:
                stream.wait_for(horizon)
                assert max(int(m.id or 0) for m in stream.messages) == horizon
        elif kind == HELD:
            read_model_at(http, target, horizon)
        elif kind == LISTED:
            listing = listed_at(http, table.game_id, horizon)
            assert listing["hand"] == summary["status"]["hand"]
        elif kind == HAND_SEEN:
            for hand, at in ended.items():
                replay = http.get(target.replace("{hand:int}", str(hand)))
                if at <= horizon:
                    assert replay.status_code == 200, replay.text[:300]
                    assert replay.json()["steps"][-1]["version"] <= horizon
                else:
                    assert replay.status_code == 409, replay.text[:300]
                    assert replay.json()["code"] == "hand_in_play"
                mine = http.get(target.replace("{hand:int}", str(hand)), headers=table.auth(1))
                assert mine.status_code == 200, mine.text[:300]  # a seat sees its hands once over
        elif kind == AUDITED:
            audit = http.request(method, target, json=body)
            assert audit.status_code == 200, audit.text
            assert audit.json()["chain"]["version"] == horizon
            verified = [h["hand"] for h in audit.json()["hands"] if h["status"] == "verified"]
            assert verified == [hand for hand, at in ended.items() if at <= horizon]
            mine = http.request(method, target, json=body, headers=table.auth(0))
            assert mine.json()["chain"]["version"] == live
        elif kind == OVER_ONLY:
            export = http.get(target)
            assert export.status_code == (200 if over else 409), export.text
        elif kind == SEAT_ONLY:
            refused = http.request(method, target, json=body)
            assert refused.status_code in (401, 403), (path, refused.text)
        elif kind == LOBBY:
            assert http.request(method, target, json=body).status_code == 409
    mine = read_model_at(http, f"/games/{table.game_id}/scoreboard", live, headers=table.auth(1))
    assert mine["version"] == live, "a seat's token sees its own scoreboard live"


def test_every_route_showing_the_game_holds_the_spectator_back_and_a_seat_sees_it_live(
    delayed: str,
) -> None:
    with httpx.Client(base_url=delayed, timeout=20) as http:
        table = open_table(http, "golf", 2, {"hands": 2, "turn_limit": 3})
        rng = random.Random(23)
        version = int(
            http.get(f"/games/{table.game_id}/events", headers=table.auth(0)).json()["version"]
        )
        ended: dict[int, int] = {}
        before_actions: list[int] = []
        horizon = version
        hand_held = False  # a hand over at the table, still in play to a spectator
        for _ in range(300):
            sweep(http, delayed, table, horizon, ended)
            seat = table.me(0)["status"]["to_act"][0]
            answer = table.act(seat, concrete(rng.choice(table.me(seat)["legal_actions"]), rng))
            assert answer.status_code == 200, answer.text
            before_actions.append(version)
            version = answer.json()["version"]
            for entry in answer.json()["events"]:
                if entry["event"]["type"] == "hand.ended":
                    ended[entry["event"]["hand"]] = entry["version"]
            if answer.json()["status"]["phase"] == "game_over":
                break
            horizon = before_actions[max(0, len(before_actions) - DELAY)]
            hand_held |= any(at > horizon for at in ended.values())
        else:
            pytest.fail("the game did not end")
        assert hand_held, "the sweep met a hand over at the table and in play to spectators"
        sweep(http, delayed, table, version, ended)  # over: shown whole
