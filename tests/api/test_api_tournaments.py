"""Tournaments over real HTTP, on PostgreSQL: an organiser runs a whole duplicate tournament
that bots play with the players' own tokens; every refusal is a problem with a stable code
and stores nothing; a raced start makes one set of games; the admin key guards creation."""

from __future__ import annotations

import time
from collections.abc import Callable, Iterator
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path
from typing import Any
from urllib.parse import quote

import httpx
import msgspec
import psycopg
import pytest

from domain.tournament.standings import RoundResult, Seat, standings
from service.ops.settings import Settings
from tests.api.server import running_server
from tests.support.tournaments import play_over_http

pytestmark = pytest.mark.api

WAIT = 30.0


@dataclass
class Event:
    """A tournament as its organiser holds it: the id, the organiser's and players' tokens."""

    http: httpx.Client
    id: str
    organiser: str
    tokens: dict[str, str]

    def auth(self, token: str | None = None) -> dict[str, str]:
        return {"Authorization": f"Bearer {token or self.organiser}"}

    def get(self) -> dict[str, Any]:
        response = self.http.get(f"/tournaments/{self.id}")
        assert response.status_code == 200, response.text
        return response.json()

    def register(self, name: str) -> httpx.Response:
        return self.http.post(
            f"/tournaments/{self.id}/players", json={"name": name}, headers=self.auth()
        )

    def start(self, token: str | None = None) -> httpx.Response:
        return self.http.post(f"/tournaments/{self.id}/rounds", headers=self.auth(token))

    def withdraw(self, name: str, token: str | None = None) -> httpx.Response:
        return self.http.post(
            f"/tournaments/{self.id}/players/{quote(name)}/withdraw", headers=self.auth(token)
        )

    def seed(self, name: str, seed: str, token: str | None = None) -> httpx.Response:
        return self.http.put(
            f"/tournaments/{self.id}/players/{quote(name)}/seed",
            json={"seed": seed},
            headers=self.auth(token),
        )

    def wait_closed(self, number: int) -> dict[str, Any]:
        deadline = time.monotonic() + WAIT
        while time.monotonic() < deadline:
            body = self.get()
            if len(body["played"]) >= number and body["played"][number - 1]["state"] == "closed":
                return body
            time.sleep(0.05)
        raise AssertionError(f"round {number} did not close by itself")


def open_event(http: httpx.Client, players: int, **options: Any) -> Event:
    body = {"name": "Club night", "variant": "golf", "table_size": 4, "rounds": 2}
    body |= {"duplicate": True, "options": {"hands": 1}} | options
    created = http.post("/tournaments", json=body)
    assert created.status_code == 201, created.text
    opened = created.json()
    assert created.headers["Location"] == f"/tournaments/{opened['tournament_id']}"
    event = Event(http, opened["tournament_id"], opened["organiser_token"], {})
    for i in range(players):
        name = f"Player {i:02}"
        response = event.register(name)
        assert response.status_code == 201, response.text
        event.tokens[name] = response.json()["token"]
    return event


@pytest.fixture
def rows(database_url: str) -> Callable[[str], list[tuple[Any, ...]]]:
    """A stream's stored rows straight from PostgreSQL, bypassing the service."""

    def read(stream: str) -> list[tuple[Any, ...]]:
        with psycopg.connect(database_url, autocommit=True) as conn:
            return conn.execute(
                "SELECT stream_version, event_id, type, data::text FROM events "
                "WHERE stream_id = %s ORDER BY stream_version",
                (stream,),
            ).fetchall()

    return read


def results_of(played: dict[str, Any]) -> RoundResult:
    """What a closed round adds to the standings, from its JSON."""
    seats = tuple(
        Seat(
            player,
            result["totals"][seat],
            result["hands"],
            seat in result["winners"] and seat not in result["resigned"],
        )
        for result in played["results"]
        for seat, player in enumerate(result["players"])
    )
    return RoundResult(played["round"], seats, tuple(played["byes"]), played["bye_score"])


def test_a_whole_duplicate_tournament_over_http(
    http: httpx.Client, rows: Callable[[str], list[tuple[Any, ...]]]
) -> None:
    event = open_event(http, 8)
    assert event.get()["phase"] == "registering"
    for number in (1, 2):
        response = event.start()
        assert response.status_code == 201, response.text
        round_ = response.json()
        assert (round_["round"], round_["byes"]) == (number, [])
        tables = round_["tables"]
        assert sorted(p for t in tables for p in t["players"]) == sorted(event.tokens)
        seeds = set()
        for table in tables:
            # The player's own tournament token reads their seat in this game (a
            # spectator of a duplicate round sees no hand before every table has played
            # it: service/tournaments/duplicate.py).
            token = event.tokens[table["players"][1]]
            game = http.get(f"/games/{table['game_id']}").json()
            assert [s["name"] for s in game["seats"]] == table["players"]
            assert game["started"]
            me = http.get(f"/games/{table['game_id']}/me", headers=event.auth(token))
            assert (me.status_code, me.json()["seat"]) == (200, 1)
            assert me.json()["status"]["phase"] in ("setup", "playing")
            dealt = [
                msgspec.json.decode(data)
                for _, _, kind, data in rows(f"game:{table['game_id']}")
                if kind == "hand.dealt"
            ]
            seeds.add((dealt[0]["seed"], dealt[0]["server_seed"]))
        assert len(seeds) == 1, "every table of a duplicate round is dealt the same cards"
        if number == 2:  # seated by the standings after round 1, best first
            before = event.get()["played"][0]
            rows_ = standings(list(event.tokens), [results_of(before)], high_wins=False)
            assert [p for t in tables for p in t["players"]] == [r.player for r in rows_]
        for i, table in enumerate(tables):
            play_over_http(http, table["game_id"], event.tokens, seed=number * 10 + i)
        body = event.wait_closed(number)
    assert body["phase"] == "ended"
    assert body["seed_secret"] is not None
    for played in body["played"]:
        for table in played["tables"]:
            audit = http.get(f"/games/{table['game_id']}/audit")
            assert audit.status_code == 200, audit.text
            assert audit.json()["ok"], "a table made in one append audits like any game"
    feed = http.get(f"/tournaments/{event.id}/events").json()
    kinds = [entry["event"]["type"] for entry in feed["events"]]
    assert kinds[-3:] == ["round.started", "round.closed", "tournament.ended"]
    assert feed["events"][0]["event"]["seed_secret"] == body["seed_secret"]


def test_nothing_shows_a_token_hash_and_the_seed_secret_waits_for_the_end(
    http: httpx.Client,
) -> None:
    event = open_event(http, 4)
    texts = [
        http.get(f"/tournaments/{event.id}").text,
        http.get(f"/tournaments/{event.id}/events").text,
    ]
    feed = http.get(f"/tournaments/{event.id}/events").json()
    assert feed["events"][0]["event"]["seed_secret"] is None
    assert event.get()["seed_secret"] is None
    for text in texts:
        assert "hash" not in text
        for token in [event.organiser, *event.tokens.values()]:
            assert token not in text
    tag = http.get(f"/tournaments/{event.id}").headers["ETag"]
    assert tag == '"5"', "the version: created and four players registered"
    again = http.get(f"/tournaments/{event.id}", headers={"If-None-Match": tag})
    assert (again.status_code, again.content) == (304, b"")
    paged = http.get(f"/tournaments/{event.id}/events", params={"after": 1, "limit": 2}).json()
    assert [e["version"] for e in paged["events"]] == [2, 3]
    assert (paged["has_more"], paged["next_after"]) == (True, 3)


def test_refusals_are_problems_and_store_nothing(
    http: httpx.Client, rows: Callable[[str], list[tuple[Any, ...]]]
) -> None:
    event = open_event(http, 5, duplicate=False)
    player, other = "Player 00", "Player 01"
    stream = f"tournament:{event.id}"
    base = f"/tournaments/{event.id}"

    def refused(response: httpx.Response, status: int, code: str) -> None:
        before = rows(stream)
        assert response.status_code == status, response.text
        assert response.headers["content-type"].startswith("application/problem+json")
        assert response.json()["code"] == code
        assert rows(stream) == before

    before = rows(stream)
    refused(http.post(f"{base}/players", json={"name": "X"}), 401, "token_required")
    bad = {"Authorization": "Bearer not-a-token"}
    refused(http.post(f"{base}/players", json={"name": "X"}, headers=bad), 401, "invalid_token")
    as_player = event.auth(event.tokens[player])
    refused(http.post(f"{base}/players", json={"name": "X"}, headers=as_player), 403,
            "not_organiser")  # fmt: skip
    refused(event.register(player), 409, "name_taken")
    assert event.register("Zo\u00e9").status_code == 201  # composed (NFC)
    before = rows(stream)
    refused(event.register("Zoe\u0301"), 409, "name_taken")  # the same name, decomposed
    refused(event.register("Zo\u00e9\U000e0041"), 422, "invalid_request")
    refused(http.post(f"{base}/players", json={"nom": "X"}, headers=event.auth()), 422,
            "invalid_request")  # fmt: skip
    refused(event.start(event.tokens[player]), 403, "not_organiser")
    refused(event.withdraw("Nobody"), 404, "unknown_player")
    refused(event.withdraw(player, event.tokens[other]), 403, "not_organiser")
    refused(event.seed(player, "mine", event.tokens[other]), 403, "not_this_player")
    refused(event.seed(player, "mine"), 403, "not_this_player")
    refused(event.seed(player, "\u202e"), 422, "invalid_request")
    refused(http.get("/tournaments/0123456789abcdef"), 404, "tournament_not_found")
    refused(http.post("/tournaments/0123456789abcdef/rounds", headers=event.auth()), 404,
            "tournament_not_found")  # fmt: skip
    assert rows(stream) == before, "not one refusal stored anything"

    assert event.start().status_code == 201
    refused(event.start(), 409, "round_in_play")
    refused(event.register("Late"), 409, "registration_closed")
    assert event.withdraw(player).status_code == 200
    refused(event.withdraw(player), 409, "player_withdrawn")
    refused(event.seed(player, "mine", event.tokens[player]), 409, "player_withdrawn")


def test_bad_tournaments_are_refused(http: httpx.Client) -> None:
    good = {"name": "Cup", "variant": "golf", "table_size": 4, "rounds": 2}
    for change, code in [
        ({"table_size": 9}, "invalid_config"),  # Golf seats 2..8
        ({"seating": "knockout"}, "invalid_request"),
        ({"variant": "poker"}, "invalid_request"),
        ({"rounds": 0}, "invalid_request"),
        ({"options": {"grab_min": 17}}, "invalid_config"),
    ]:
        response = http.post("/tournaments", json=good | change)
        assert response.status_code == 422, (change, response.text)
        assert response.json()["code"] == code


def test_too_few_players_start_no_round(http: httpx.Client) -> None:
    event = open_event(http, 3)
    response = event.start()
    assert (response.status_code, response.json()["code"]) == (409, "not_enough_players")
    assert event.get()["played"] == []


def test_an_odd_player_out_takes_a_bye(http: httpx.Client) -> None:
    event = open_event(http, 6, table_size=3, rounds=1)
    assert event.withdraw("Player 05", event.tokens["Player 05"]).status_code == 200
    round_ = event.start().json()
    assert (len(round_["tables"]), len(round_["byes"])) == (1, 2)
    seated = {p for t in round_["tables"] for p in t["players"]} | set(round_["byes"])
    assert "Player 05" not in seated
    assert len(seated) == 5


def test_a_withdrawal_resigns_the_players_seat_in_their_game(
    http: httpx.Client, rows: Callable[[str], list[tuple[Any, ...]]]
) -> None:
    event = open_event(http, 4)
    table = event.start().json()["tables"][0]
    leaving = table["players"][3]
    response = event.withdraw(leaving)
    assert response.status_code == 200, response.text
    assert response.json()["resigned_games"] == [table["game_id"]]
    assert response.json()["round"] == 1
    # The referee may already be playing the seat out: the resignation is the stream's
    # only one, and what follows it is the referee's doing for the resigned seat.
    stored = rows(f"game:{table['game_id']}")
    kinds = [row[2] for row in stored]
    assert kinds.count("seat.resigned") == 1
    resigned = kinds.index("seat.resigned")
    assert msgspec.json.decode(stored[resigned][3]) == {"type": "seat.resigned", "seat": 3,
                                                        "reason": "withdrawn"}  # fmt: skip
    for row in stored[resigned + 1 :]:
        if row[2] == "turn.played_for":
            assert msgspec.json.decode(row[3])["seat"] == 3
    acted = http.post(
        f"/games/{table['game_id']}/actions",
        json={"type": "setup-flip", "row": 0, "col": 0},
        headers=event.auth(event.tokens[leaving]),
    )
    assert (acted.status_code, acted.json()["code"]) == (409, "seat_resigned")


def test_a_player_sets_their_seed_and_it_counts_in_the_next_duplicate_round(
    http: httpx.Client,
) -> None:
    event = open_event(http, 4)
    name = "Player 02"
    response = event.seed(name, "four dice: 3 1 6 6", event.tokens[name])
    assert response.status_code == 200, response.text
    assert event.get()["players"][2]["seed"] == "four dice: 3 1 6 6"
    round_ = event.start().json()
    game_id = round_["tables"][0]["game_id"]
    own = http.put(
        f"/games/{game_id}/seats/0/seed",
        json={"seed": "x"},
        headers=event.auth(event.tokens[round_["tables"][0]["players"][0]]),
    )
    assert (own.status_code, own.json()["code"]) == (409, "duplicate_deals")
    feed = http.get(f"/tournaments/{event.id}/events").json()["events"]
    started = feed[-1]["event"]
    assert [name, "four dice: 3 1 6 6"] in started["seat_seeds_from"]
    assert round_["seat_seed"] == started["seat_seed"]


def test_two_starts_at_once_make_one_round(
    http: httpx.Client, api_base: str, rows: Callable[[str], list[tuple[Any, ...]]]
) -> None:
    event = open_event(http, 8, duplicate=False)

    def start() -> httpx.Response:
        with httpx.Client(base_url=api_base, timeout=20) as client:
            return client.post(f"/tournaments/{event.id}/rounds", headers=event.auth())

    with ThreadPoolExecutor(2) as pool:
        answers = list(pool.map(lambda _: start(), range(2)))
    statuses = sorted(r.status_code for r in answers)
    assert statuses == [201, 409], [r.text for r in answers]
    kinds = [row[2] for row in rows(f"tournament:{event.id}")]
    assert kinds.count("round.started") == 1
    for table in event.get()["played"][0]["tables"]:
        stored = rows(f"game:{table['game_id']}")
        assert [row[2] for row in stored].count("game.created") == 1


def test_a_retried_create_and_register_with_their_keys_answer_alike(http: httpx.Client) -> None:
    body = {"name": "Retry cup", "variant": "golf", "table_size": 2, "rounds": 1}
    key = {"Idempotency-Key": "a-create-key-of-some-length"}
    first = http.post("/tournaments", json=body, headers=key).json()
    again = http.post("/tournaments", json=body, headers=key).json()
    assert first == again
    auth = {"Authorization": f"Bearer {first['organiser_token']}"}
    url = f"/tournaments/{first['tournament_id']}/players"
    key = {"Idempotency-Key": "a-register-key-of-some-length"}
    one = http.post(url, json={"name": "Ann"}, headers=auth | key).json()
    two = http.post(url, json={"name": "Ann"}, headers=auth | key).json()
    assert one == two
    other = http.post(url, json={"name": "Bob"}, headers=auth | key)
    assert (other.status_code, other.json()["code"]) == (422, "idempotency_key_reused")


@pytest.fixture(scope="module")
def guarded(api_settings: Settings, tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    settings = msgspec.structs.replace(
        api_settings,
        admin_key="the-admin-key",
        data_dir=Path(tmp_path_factory.mktemp("fairway-admin")),
    )
    with running_server(settings) as base:
        yield base


def test_with_an_admin_key_only_its_holder_creates_a_tournament(guarded: str) -> None:
    body = {"name": "Guarded", "variant": "golf", "table_size": 2, "rounds": 1}
    with httpx.Client(base_url=guarded, timeout=20) as client:
        missing = client.post("/tournaments", json=body)
        assert (missing.status_code, missing.json()["code"]) == (401, "token_required")
        wrong = client.post("/tournaments", json=body, headers={"Authorization": "Bearer no"})
        assert (wrong.status_code, wrong.json()["code"]) == (403, "not_admin")
        right = client.post(
            "/tournaments", json=body, headers={"Authorization": "Bearer the-admin-key"}
        )
        assert right.status_code == 201, right.text
