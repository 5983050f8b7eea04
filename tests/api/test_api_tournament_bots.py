"""Bot players in tournaments over real HTTP: the organiser registers them by name and level,
every refusal (an unknown level, anyone but the organiser, a taken name) is a problem that
stores nothing; and a tournament of 8 bots and no person runs every round to the end by
itself once its organiser has started round 1 (the bot runner plays each table, the round
keeper closes each round and starts the next: `auto_rounds`), its standings
mark every bot and are those of its events, its audit passes, and the ratings mark its bots
and leave them out with `bots=false`."""

from __future__ import annotations

import asyncio
import random
import secrets
import time
from collections.abc import Callable, Iterator
from typing import Any

import httpx
import msgspec
import psycopg
import pytest

from domain.tournament.standings import RoundResult, Seat, standings
from events.migrate import migrate
from service.ops.settings import Settings
from tests.api.players import concrete
from tests.api.server import running_server
from tests.support.redis_keys import forget
from tests.support.services import throwaway_database

pytestmark = pytest.mark.api

WAIT = 240.0
"""Seconds a round of bots may take (they think for no time; the machine may be busy)."""
LEVELS = {f"Bot {i}": ("greedy", "random")[i % 2] for i in range(8)}

Rows = Callable[[str], list[tuple[Any, ...]]]


@pytest.fixture
def rows(database_url: str) -> Rows:
    """A stream's stored rows straight from PostgreSQL, bypassing the service."""

    def read(stream: str) -> list[tuple[Any, ...]]:
        with psycopg.connect(database_url, autocommit=True) as conn:
            return conn.execute(
                "SELECT stream_version, event_id, type, data::text FROM events "
                "WHERE stream_id = %s ORDER BY stream_version",
                (stream,),
            ).fetchall()

    return read


def opened(http: httpx.Client, **changes: Any) -> tuple[str, str]:
    body = {"name": "Bot night", "variant": "golf", "table_size": 4, "rounds": 2}
    body |= {"options": {"hands": 1}} | changes
    created = http.post("/tournaments", json=body)
    assert created.status_code == 201, created.text
    return created.json()["tournament_id"], created.json()["organiser_token"]


def register(
    http: httpx.Client, tid: str, token: str, name: str, bot: str | None = None
) -> httpx.Response:
    body = {"name": name} if bot is None else {"name": name, "bot": bot}
    return http.post(
        f"/tournaments/{tid}/players", json=body, headers={"Authorization": f"Bearer {token}"}
    )


def test_the_organiser_registers_a_bot_and_every_refusal_stores_nothing(
    http: httpx.Client, rows: Rows
) -> None:
    tid, organiser = opened(http)
    stream = f"tournament:{tid}"
    added = register(http, tid, organiser, "Robo", "greedy")
    assert added.status_code == 201, added.text
    assert added.json() | {"version": 0} == {
        "tournament_id": tid,
        "name": "Robo",
        "token": None,
        "version": 0,
        "bot": "greedy",
    }
    person = register(http, tid, organiser, "Ada")
    assert person.json()["bot"] is None
    ada = person.json()["token"]
    players = http.get(f"/tournaments/{tid}").json()["players"]
    assert [(p["name"], p["bot"]) for p in players] == [("Robo", "greedy"), ("Ada", None)]

    def refused(response: httpx.Response, status: int, code: str) -> dict[str, Any]:
        assert response.status_code == status, response.text
        assert response.headers["content-type"].startswith("application/problem+json")
        assert response.json()["code"] == code
        return response.json()  # type: ignore[no-any-return]

    before = rows(stream)
    problem = refused(register(http, tid, organiser, "Hal", "genius"), 422, "unknown_bot_level")
    assert "random, greedy" in problem["detail"]
    refused(register(http, tid, ada, "Hal", "greedy"), 403, "not_organiser")
    refused(register(http, tid, "not-a-token", "Hal", "greedy"), 401, "invalid_token")
    refused(register(http, tid, organiser, "Robo", "random"), 409, "name_taken")
    refused(register(http, tid, organiser, "Ada", "random"), 409, "name_taken")
    refused(register(http, tid, organiser, "Hal", ""), 422, "invalid_request")
    refused(
        http.post(
            f"/tournaments/{tid}/players",
            json={"name": "Hal", "bot": 3},
            headers={"Authorization": f"Bearer {organiser}"},
        ),
        422,
        "invalid_request",
    )
    # A retry with its key answers alike and stores nothing more; the key for another
    # level is refused.
    keyed = {"Authorization": f"Bearer {organiser}", "Idempotency-Key": "bot-register-key-01"}
    body = {"name": "Keyed", "bot": "random"}
    first = http.post(f"/tournaments/{tid}/players", json=body, headers=keyed)
    assert first.status_code == 201, first.text
    before = rows(stream)
    again = http.post(f"/tournaments/{tid}/players", json=body, headers=keyed)
    assert (again.status_code, again.json()) == (201, first.json())
    other = http.post(f"/tournaments/{tid}/players", json=body | {"bot": "greedy"}, headers=keyed)
    refused(other, 422, "idempotency_key_reused")
    # No token acts for a bot: the organiser sets no seed for it, nor does anyone.
    seed = f"/tournaments/{tid}/players/Robo/seed"
    auth = {"Authorization": f"Bearer {organiser}"}
    refused(http.put(seed, json={"seed": "mine"}, headers=auth), 403, "not_this_player")
    assert rows(stream) == before, "not one refusal stored anything"


# ---- a tournament of bots alone ------------------------------------------------------------


@pytest.fixture(scope="module")
def bot_night(
    api_settings: Settings, postgres_server_url: str, redis_url: str
) -> Iterator[tuple[str, str]]:
    """A server of its own (database, Redis key space) with everything that makes a
    tournament go by itself: the bot runner (no think time), the round keeper, the
    projector. Yields its base URL and its database."""
    prefix = f"botnight{secrets.token_hex(4)}"
    with throwaway_database(postgres_server_url, "fairway_bot_night") as database:
        migrate(database)
        settings = msgspec.structs.replace(
            api_settings,
            database_url=database,
            redis_url=redis_url,
            redis_prefix=prefix,
            projector_inline=True,
            bot_think=0.0,
        )
        with running_server(settings) as base:
            yield base, database
    asyncio.run(forget(redis_url, prefix))


def until(what: str, read: Callable[[], Any], holds: Callable[[Any], bool]) -> Any:
    deadline = time.monotonic() + WAIT
    while True:
        found = read()
        if holds(found):
            return found
        assert time.monotonic() < deadline, f"{what} did not happen: {found}"
        time.sleep(0.1)


def results_of(played: dict[str, Any]) -> RoundResult:
    """What a closed round adds to the standings, from its JSON."""
    seats = tuple(
        Seat(
            player,
            r["totals"][seat],
            r["hands"],
            seat in r["winners"] and seat not in r["resigned"],
        )
        for r in played["results"]
        for seat, player in enumerate(r["players"])
    )
    return RoundResult(played["round"], seats, tuple(played["byes"]), played["bye_score"])


def test_a_tournament_of_eight_bots_plays_every_round_to_the_end_by_itself(
    bot_night: tuple[str, str],
) -> None:
    """Given 8 bot players and no person, at tables of 3 (two tables and two byes a round),
    duplicate deals, three rounds that start by themselves, and a bot withdrawn as round 1
    plays: when the organiser starts round 1, then the bots play every table to its end,
    the round keeper closes each round and starts the next, with no client acting for any
    seat, until the tournament has ended."""
    base, _ = bot_night
    with httpx.Client(base_url=base, timeout=30) as http:
        tid, organiser = opened(http, table_size=3, rounds=3, duplicate=True, auto_rounds=True)
        auth = {"Authorization": f"Bearer {organiser}"}
        for name, level in LEVELS.items():
            assert register(http, tid, organiser, name, level).status_code == 201
        path = f"/tournaments/{tid}"
        started = http.post(f"{path}/rounds", headers=auth)
        assert started.status_code == 201, started.text
        leaving = started.json()["tables"][0]["players"][0]  # its seat resigned if in play
        gone = http.post(f"{path}/players/{leaving}/withdraw", headers=auth)
        assert gone.status_code == 200, gone.text
        body = until("the end", lambda: http.get(path).json(), lambda b: b["phase"] == "ended")
        assert [p["bot"] for p in body["players"]] == list(LEVELS.values())
        assert [played["round"] for played in body["played"]] == [1, 2, 3]
        for played in body["played"]:
            assert sum(len(t["players"]) for t in played["tables"]) == 6
            seated = {p for t in played["tables"] for p in t["players"]}
            assert played["round"] == 1 or leaving not in seated | set(played["byes"])
            for table in played["tables"]:
                seats = http.get(f"/games/{table['game_id']}").json()["seats"]
                assert [seat["bot"] for seat in seats] == [LEVELS[p] for p in table["players"]]

        # The standings: every bot marked, and those the rounds' results give.
        ended = until(
            "the final standings",
            lambda: http.get(f"{path}/standings"),
            lambda r: r.status_code == 200 and r.json()["ended"],
        ).json()
        withdrawn = [p["name"] for p in body["players"] if p["withdrawn"]]
        rounds = [results_of(played) for played in body["played"]]
        expected = standings(list(LEVELS), rounds, False, withdrawn)
        assert ended["rows"] == [
            msgspec.to_builtins(row) | {"bot": LEVELS[row.player]} for row in expected
        ]
        for played in body["played"]:
            results = http.get(f"{path}/rounds/{played['round']}/results").json()
            for line in results["tables"]:
                assert line["bots"] == [LEVELS[p] for p in line["players"]]
                assert line["status"] == "ended"
                game = http.get(f"/games/{line['game_id']}").json()["status"]
                assert (game["phase"], game["totals"]) == ("game_over", line["totals"])

        # Its audit: the seating (bot seats of each bot's level), the round chain, the
        # decks, and every table's game with every move in it legal.
        audit = http.get(f"{path}/audit")
        assert audit.status_code == 200, audit.text
        assert audit.json()["ok"], audit.json()["failures"]
        assert len(audit.json()["tables"]) == 6

        # The ratings mark every bot; without bots, none of them is on the board.
        for name, level in LEVELS.items():
            rating = until(
                f"{name} rated",
                lambda: http.get(f"/ratings/{name}"),  # noqa: B023
                lambda r: r.status_code == 200,
            ).json()
            assert rating["bot"] == level
        everyone = http.get("/ratings", params={"limit": 200}).json()["ratings"]
        assert {r["name"] for r in everyone} >= set(LEVELS)
        people = http.get("/ratings", params={"limit": 200, "bots": "false"}).json()["ratings"]
        assert not {r["name"] for r in people} & set(LEVELS)


def test_the_ratings_mark_a_bot_and_leave_it_out_without_bots(bot_night: tuple[str, str]) -> None:
    """Given a casual game of a person against a bot seat, played to its end, then both are
    rated, the bot marked with its level; `GET /ratings?bots=false` lists the person alone."""
    base, _ = bot_night
    rng = random.Random(5)
    with httpx.Client(base_url=base, timeout=30) as http:
        body = {"variant": "golf", "seats": 2, "options": {"hands": 1}}
        created = http.post("/games", json=body | {"bots": [{"seat": 1, "level": "greedy"}]})
        assert created.status_code == 201, created.text
        game = created.json()["game_id"]
        claimed = http.post(f"/games/{game}/seats", json={"name": "Ada", "seat": 0})
        assert claimed.status_code == 201, claimed.text
        auth = {"Authorization": f"Bearer {claimed.json()['token']}"}  # the last seat: started

        def my_turn() -> dict[str, Any]:
            return until(
                "Ada's turn or the end",
                lambda: http.get(f"/games/{game}/me", headers=auth).json(),
                lambda me: me["legal_actions"] or me["status"]["phase"] == "game_over",
            )

        while (me := my_turn())["status"]["phase"] != "game_over":
            action = concrete(rng.choice(me["legal_actions"]), rng)
            acted = http.post(f"/games/{game}/actions", json=action, headers=auth)
            assert acted.status_code == 200, acted.text
        bot = until(
            "the bot rated",
            lambda: http.get("/ratings/greedy bot 1"),
            lambda r: r.status_code == 200,
        ).json()
        assert bot["bot"] == "greedy"
        assert http.get("/ratings/Ada").json()["bot"] is None
        everyone = http.get("/ratings", params={"limit": 200}).json()["ratings"]
        assert {"Ada", "greedy bot 1"} <= {r["name"] for r in everyone}
        people = http.get("/ratings", params={"limit": 200, "bots": "false"}).json()["ratings"]
        assert "Ada" in {r["name"] for r in people}
        assert not any(r["bot"] for r in people)
        assert [r["name"] for r in people] == [r["name"] for r in everyone if r["bot"] is None], (
            "the same order, bots left out"
        )
