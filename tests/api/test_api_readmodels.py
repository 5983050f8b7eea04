"""The read models over HTTP: GET /games/{id}/scoreboard, GET /players/{name}, and the
replay served from the replay projection, against what the write side says of the same game.

The session's server keeps its projections in memory (no REDIS_URL: the projector runs in
the process); one test runs a server on real Redis, one on a Redis that does not answer."""

from __future__ import annotations

import asyncio
import random
import secrets
import time
from collections.abc import Callable, Iterator
from typing import Any

import httpx
import msgspec
import pytest

from service.ops.settings import Settings
from tests.api.players import Table, concrete, open_table
from tests.api.server import free_port, running_server
from tests.support.redis_keys import forget

pytestmark = pytest.mark.api


def play_to_end(table: Table, rng: random.Random, steps: int = 2000) -> None:
    for _ in range(steps):
        status = table.public()["status"]
        if status["phase"] == "game_over":
            return
        seat = rng.choice(status["to_act"])
        legal = table.me(seat)["legal_actions"]
        response = table.act(seat, concrete(rng.choice(legal), rng))
        assert response.status_code == 200, response.text
    raise AssertionError("the game did not end")


def caught_up(http: httpx.Client, game_id: str, timeout: float = 120.0) -> dict[str, Any]:
    """The scoreboard once it has reached the game's current version (a server on a new
    Redis prefix first builds every projection from zero over the session's events)."""
    version = http.get(f"/games/{game_id}").json()["version"]
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        response = http.get(f"/games/{game_id}/scoreboard")
        if response.status_code == 200 and response.json()["version"] == version:
            return response.json()  # type: ignore[no-any-return]
        assert response.status_code in (200, 503), response.text
        time.sleep(0.05)
    raise AssertionError(f"the scoreboard of {game_id} did not reach version {version}")


def player_once(
    http: httpx.Client, name: str, holds: Callable[[dict[str, Any]], bool], timeout: float = 60.0
) -> httpx.Response:
    """The player's record once `holds` says it has caught up: each read model follows the
    feed on its own, so the players projection may trail the scoreboard a moment."""
    deadline = time.monotonic() + timeout
    while True:
        response = http.get(f"/players/{name}")
        if response.status_code == 200 and holds(response.json()):
            return response
        assert response.status_code in (200, 404, 503), response.text
        assert time.monotonic() < deadline, f"{name}'s record did not catch up: {response.text}"
        time.sleep(0.05)


def named_table(
    http: httpx.Client, variant: str, names: list[str], options: dict[str, Any]
) -> Table:
    created = http.post(
        "/games", json={"variant": variant, "seats": len(names), "options": options}
    )
    assert created.status_code == 201, created.text
    table = Table(http, created.json()["game_id"], created.json()["creator_token"])
    for name in names:
        claimed = http.post(f"/games/{table.game_id}/seats", json={"name": name})
        assert claimed.status_code == 201, claimed.text
        table.tokens.append(claimed.json()["token"])
    started = http.post(
        f"/games/{table.game_id}/start", headers={"Authorization": f"Bearer {table.creator}"}
    )
    assert started.status_code == 200, started.text
    return table


def test_the_scoreboard_says_what_the_game_says(http: httpx.Client) -> None:
    """Given a game played to its end, then its scoreboard's hands, totals, winners and
    status are those of /scores and /view, its ETag is the game's version, and a copy of
    that version is answered 304."""
    table = open_table(http, "golf", 3, {"hands": 2, "turn_limit": 8})
    live = caught_up(http, table.game_id)
    assert live["status"]["to_act"] == table.public()["status"]["to_act"]
    assert live["hands"] == []
    play_to_end(table, random.Random(1))
    board = caught_up(http, table.game_id)
    scores = http.get(f"/games/{table.game_id}/scores").json()
    assert board["hands"] == scores["hands"]
    assert board["totals"] == scores["totals"]
    assert board["winners"] == scores["winners"]
    assert board["finished"] is True
    assert board["status"] == table.public()["status"]
    assert board["seats"] == [{"seat": i, "name": f"bot {i}", "bot": None} for i in range(3)]
    response = http.get(f"/games/{table.game_id}/scoreboard")
    assert response.headers["etag"] == f'"{board["version"]}"'
    again = http.get(
        f"/games/{table.game_id}/scoreboard", headers={"If-None-Match": response.headers["etag"]}
    )
    assert again.status_code == 304
    assert again.content == b""


def test_an_unknown_game_has_no_scoreboard(http: httpx.Client) -> None:
    response = http.get(f"/games/{secrets.token_hex(8)}/scoreboard")
    assert response.status_code == 404
    assert response.json()["code"] == "game_not_found"
    bad = http.get("/games/not-an-id/scoreboard")
    assert bad.status_code == 400
    assert bad.json()["code"] == "invalid_request"


def test_a_players_record_counts_every_seat_they_played(http: httpx.Client) -> None:
    """Given a name holding two seats of a finished game and one seat of a game in play,
    then /players/{name} counts three games played, two finished, and lists them newest
    first a page at a time; the totals and places are those of the finished game."""
    name = f"Rm {secrets.token_hex(4)}"
    other = f"Other {secrets.token_hex(4)}"
    finished = named_table(http, "basketball", [name, other, name], {})
    play_to_end(finished, random.Random(2))
    playing = named_table(http, "golf", [other, name], {"hands": 1})
    caught_up(http, finished.game_id)
    caught_up(http, playing.game_id)
    record = player_once(http, name, lambda b: b["games_played"] == 3 and b["games_finished"] == 2)
    body = record.json()
    totals = http.get(f"/games/{finished.game_id}/scores").json()
    winners = totals["winners"]
    ranked = sorted(totals["totals"], reverse=True)  # Basketball: high totals win
    places = [ranked.index(t) + 1 for t in totals["totals"]]
    assert body["games_played"] == 3
    assert body["games_finished"] == 2
    assert body["wins"] == sum(seat in winners for seat in (0, 2))
    assert body["points"] == totals["totals"][0] + totals["totals"][2]
    assert body["best_place"] == min(places[0], places[2])
    assert body["worst_place"] == max(places[0], places[2])
    assert [(g["game_id"], g["seat"]) for g in body["games"]] == [
        (playing.game_id, 1),
        (finished.game_id, 2),
        (finished.game_id, 0),
    ]
    assert body["games"][0] == {
        "game_id": playing.game_id,
        "seat": 1,
        "variant": "golf",
        "finished": False,
        "total": None,
        "place": None,
        "won": False,
    }
    assert body["games"][1]["total"] == totals["totals"][2]
    assert body["games"][1]["place"] == places[2]

    seen, cursor = [], None
    while True:
        params: dict[str, Any] = {"limit": 1} | ({"cursor": cursor} if cursor else {})
        page = http.get(f"/players/{name}", params=params).json()
        seen += [(g["game_id"], g["seat"]) for g in page["games"]]
        cursor = page["next_cursor"]
        if cursor is None:
            break
    assert seen == [(g["game_id"], g["seat"]) for g in body["games"]]
    tag = record.headers["etag"]
    assert http.get(f"/players/{name}", headers={"If-None-Match": tag}).status_code == 304


@pytest.mark.parametrize(
    ("path", "status", "code"),
    [
        ("/players/Nobody Seated Here", 404, "player_not_found"),  # a name no test seats
        ("/players/" + "x" * 41, 400, "invalid_request"),
        ("/players/Ada?limit=0", 400, "invalid_request"),
        ("/players/Ada?limit=201", 400, "invalid_request"),
        ("/players/Ada?cursor=not-a-cursor", 400, "invalid_request"),
    ],
)
def test_a_bad_player_request_is_a_clear_problem(
    http: httpx.Client, path: str, status: int, code: str
) -> None:
    if code != "player_not_found":  # make sure Ada exists, so only the bad value is wrong
        named_table(http, "golf", ["Ada", "Bo"], {"hands": 1})
        deadline = time.monotonic() + 60
        while http.get("/players/Ada").status_code != 200 and time.monotonic() < deadline:
            time.sleep(0.05)
    response = http.get(path)
    assert response.status_code == status, response.text
    assert response.json()["code"] == code
    assert response.headers["content-type"].startswith("application/problem+json")


def test_the_replay_of_a_finished_hand_is_served_and_one_in_play_is_not(
    http: httpx.Client,
) -> None:
    """Given a game whose first hand is over and whose second is in play, then the first
    hand's replay is served (every step, from its deal to its end) with the version of its
    last step as ETag, and the second's is refused whole."""
    table = open_table(http, "golf", 2, {"hands": 2, "turn_limit": 3})
    rng = random.Random(3)
    while table.public()["status"]["hand"] < 2:
        status = table.public()["status"]
        seat = rng.choice(status["to_act"])
        legal = table.me(seat)["legal_actions"]
        assert table.act(seat, concrete(rng.choice(legal), rng)).status_code == 200
    caught_up(http, table.game_id)
    replay = http.get(f"/games/{table.game_id}/hands/1/replay")
    assert replay.status_code == 200, replay.text
    steps = replay.json()["steps"]
    assert steps[0]["event"]["type"] == "hand.dealt"
    assert steps[-1]["event"]["type"] == "hand.ended"
    assert replay.headers["etag"] == f'"{steps[-1]["version"]}"'
    live = http.get(f"/games/{table.game_id}/hands/2/replay")
    assert live.status_code == 409
    assert live.json()["code"] == "hand_in_play"


def test_a_seed_set_mid_hand_is_a_step_of_the_replay_which_has_no_gap_in_versions(
    http: httpx.Client,
) -> None:
    """Given a seat that sets its seed during the first hand, when that hand is over, then
    its replay is every event of the feed from the hand's deal to the next deal, the
    `seat.seed_set` included, in the feed's public shape."""
    table = open_table(http, "golf", 2, {"hands": 2, "turn_limit": 3})
    rng = random.Random(5)
    seed_set = False
    while table.public()["status"]["hand"] < 2:
        status = table.public()["status"]
        seat = rng.choice(status["to_act"])
        legal = table.me(seat)["legal_actions"]
        assert table.act(seat, concrete(rng.choice(legal), rng)).status_code == 200
        if not seed_set:
            put = http.put(
                f"/games/{table.game_id}/seats/1/seed",
                json={"seed": "mid-hand seed"},
                headers=table.auth(1),
            )
            assert put.status_code == 200, put.text
            seed_set = True
    caught_up(http, table.game_id)
    feed = http.get(f"/games/{table.game_id}/events", params={"limit": 1000}).json()["events"]
    deals = [e["version"] for e in feed if e["event"]["type"] == "hand.dealt"]
    replay = http.get(f"/games/{table.game_id}/hands/1/replay")
    assert replay.status_code == 200, replay.text
    steps = replay.json()["steps"]
    assert [step["version"] for step in steps] == list(range(deals[0], deals[1]))
    shown = {e["version"]: e["event"] for e in feed}
    assert [step["event"] for step in steps] == [shown[step["version"]] for step in steps]
    assert {"type": "seat.seed_set", "seat": 1, "seed": "mid-hand seed"} in shown.values()
    assert any(step["event"]["type"] == "seat.seed_set" for step in steps)


@pytest.fixture
def redis_settings(api_settings: Settings, redis_url: str) -> Iterator[Settings]:
    prefix = f"rmapi{secrets.token_hex(4)}"
    yield msgspec.structs.replace(
        api_settings, redis_url=redis_url, redis_prefix=prefix, projector_inline=True
    )
    asyncio.run(forget(redis_url, prefix))


def test_on_redis_the_read_models_agree_with_the_game(redis_settings: Settings) -> None:
    with running_server(redis_settings) as base, httpx.Client(base_url=base, timeout=20) as http:
        name = f"Redis {secrets.token_hex(4)}"
        table = named_table(http, "tens-shedding", [name, "Bo"], {"turn_limit": 30})
        play_to_end(table, random.Random(4))
        board = caught_up(http, table.game_id)
        scores = http.get(f"/games/{table.game_id}/scores").json()
        assert board["hands"] == scores["hands"]
        assert board["winners"] == scores["winners"]
        player_once(http, name, lambda b: b["games_finished"] == 1)
        for hand in scores["hands"]:
            replay = http.get(f"/games/{table.game_id}/hands/{hand['hand']}/replay")
            assert replay.status_code == 200
            assert replay.json()["steps"][-1]["version"] <= board["version"]


def test_without_redis_the_read_models_are_503_and_the_replay_falls_back(
    api_settings: Settings,
) -> None:
    """Given a service whose Redis does not answer, then the scoreboard and players answer
    503 `projections_unavailable` with Retry-After, play goes on, and a finished hand's
    replay is still served, folded from the game's own events."""
    dead = msgspec.structs.replace(
        api_settings, redis_url=f"redis://127.0.0.1:{free_port()}", redis_prefix="rmdead"
    )
    with running_server(dead) as base, httpx.Client(base_url=base, timeout=20) as http:
        table = open_table(http, "golf", 2, {"hands": 1, "turn_limit": 2})
        play_to_end(table, random.Random(5))
        for path in (f"/games/{table.game_id}/scoreboard", "/players/bot 0"):
            response = http.get(path)
            assert response.status_code == 503, response.text
            assert response.json()["code"] == "projections_unavailable"
            assert response.headers["retry-after"] == "1"
        replay = http.get(f"/games/{table.game_id}/hands/1/replay")
        assert replay.status_code == 200
        assert replay.json()["steps"][-1]["event"]["type"] == "game.ended"
