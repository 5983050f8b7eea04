"""Resigning over HTTP: the seat's holder resigns, the service's bot plays the seat out so
the table finishes, every refusal is a problem that stores nothing, the views show who
resigned and the turn clock, and a turn played for a seat shows its hidden cards to nobody
else."""

from __future__ import annotations

import random
import time
from collections.abc import Callable, Iterator
from datetime import UTC, datetime, timedelta
from typing import Any

import httpx
import msgspec
import pytest

from events.migrate import migrate
from service.audit.offline import verify_export
from service.ops.settings import Settings
from tests.api.players import Table, concrete, open_table
from tests.api.server import running_server
from tests.support.services import throwaway_database

pytestmark = pytest.mark.api

Stored = Callable[[str], list[tuple[Any, ...]]]
WAIT = 60.0
LONGEST = 900.0


def resign(table: Table, seat: int, token: str | None = None) -> httpx.Response:
    headers = {} if token is None else {"Authorization": f"Bearer {token}"}
    return table.http.post(f"/games/{table.game_id}/seats/{seat}/resign", headers=headers)


def refused(response: httpx.Response, status: int, code: str) -> None:
    assert response.status_code == status, response.text
    assert response.headers["content-type"].startswith("application/problem+json")
    assert response.json()["code"] == code


def play_out(table: Table, humans: set[int], rng: random.Random) -> dict[str, Any]:
    """Play the `humans`' turns over HTTP until the game is over; the service plays the
    rest. Returns the final public view. A game of Tens-shedding may run to nearly 2,000
    turns, so what fails is a game that stops moving (no new event for `WAIT` seconds) or
    that never ends (`LONGEST`)."""
    deadline, version, give_up = time.monotonic() + WAIT, 0, time.monotonic() + LONGEST
    while time.monotonic() < min(deadline, give_up):
        public = table.public()
        status = public["status"]
        if status["phase"] == "game_over":
            return public
        if public["version"] != version:
            deadline, version = time.monotonic() + WAIT, public["version"]
        mine = [seat for seat in status["to_act"] if seat in humans]
        if not mine:
            time.sleep(0.02)  # the bot's turn: the referee plays it
            continue
        seat = rng.choice(mine)
        legal = table.me(seat)["legal_actions"]
        if not legal:
            continue
        response = table.act(seat, concrete(rng.choice(legal), rng))
        if response.status_code == 409:  # the game moved meanwhile (a bot's move)
            continue
        response.raise_for_status()
    raise AssertionError(f"the game stopped moving, or never ended, at version {version}")


def wait_for_humans(table: Table, humans: set[int]) -> None:
    """Until only `humans` are to act (the bot has played what it could)."""
    deadline = time.monotonic() + WAIT
    while not set(table.public()["status"]["to_act"]) <= humans:
        assert time.monotonic() < deadline, "the bot did not play"
        time.sleep(0.02)


def feed(table: Table, seat: int | None = None) -> list[dict[str, Any]]:
    headers = {} if seat is None else table.auth(seat)
    response = table.http.get(f"/games/{table.game_id}/events", headers=headers)
    response.raise_for_status()
    return list(response.json()["events"])


@pytest.mark.timeout(LONGEST + 120)
def test_a_seat_resigns_and_the_bot_plays_it_out_to_the_end(http: httpx.Client) -> None:
    table = open_table(http, "golf", 2, {"hands": 1})
    answer = resign(table, 0, table.tokens[0])
    assert answer.status_code == 200, answer.text
    body = answer.json()
    assert body["receipt"] is not None
    assert answer.headers["etag"] == f'"{body["version"]}"'
    assert [s["resigned"] for s in body["seats"]] == ["resigned", None]
    refused(table.act(0, {"type": "setup-flip", "row": 0, "col": 0}), 409, "seat_resigned")
    assert table.me(0)["seat"] == 0, "the resigned seat's token still reads its view"
    final = play_out(table, {1}, random.Random(3))
    assert [s["resigned"] for s in final["seats"]] == ["resigned", None]
    events = feed(table)
    played = [e["event"] for e in events if e["event"]["type"] == "turn.played_for"]
    assert played, "the bot played seat 0"
    assert {(p["seat"], p["reason"]) for p in played} == {(0, "resigned")}
    resigned = [e["event"] for e in events if e["event"]["type"] == "seat.resigned"]
    assert resigned == [{"type": "seat.resigned", "seat": 0, "reason": "resigned"}]
    after_played = [
        e for e in events if e["metadata"] and e["metadata"].get("played_for") == "resigned"
    ]
    assert after_played, "the game is over: the feed shows each played turn's metadata"
    assert all(e["metadata"]["seat"] == 0 for e in after_played)
    audit = http.get(f"/games/{table.game_id}/audit")
    assert audit.status_code == 200, audit.text
    assert audit.json()["ok"] is True
    replay = http.get(f"/games/{table.game_id}/hands/1/replay")
    assert replay.status_code == 200, replay.text
    export = http.get(f"/games/{table.game_id}/export")
    assert export.status_code == 200, export.text
    assert verify_export(export.content).ok, "the export verifies offline, played turns too"
    metrics = http.get("/metrics").text
    assert 'fairway_turns_played_for_total{reason="resigned"}' in metrics


@pytest.mark.timeout(LONGEST + 120)
def test_a_table_where_every_seat_resigned_finishes_by_the_bot(http: httpx.Client) -> None:
    table = open_table(http, "tens-shedding", 2)
    for seat in range(2):
        assert resign(table, seat, table.tokens[seat]).status_code == 200
    final = play_out(table, set(), random.Random(1))
    assert final["status"]["winners"]
    scores = http.get(f"/games/{table.game_id}/scores").json()
    assert scores["finished"] is True


@pytest.mark.timeout(LONGEST + 120)
def test_refusals_are_problems_and_change_nothing_stored(
    http: httpx.Client, stored: Stored
) -> None:
    created = http.post("/games", json={"variant": "golf", "seats": 2, "options": {"hands": 1}})
    game_id = created.json()["game_id"]
    tokens = [
        http.post(f"/games/{game_id}/seats", json={"name": f"p{s}"}).json()["token"]
        for s in range(2)
    ]
    lobby = Table(http, game_id, created.json()["creator_token"], tokens)
    before = stored(game_id)
    refused(resign(lobby, 0, tokens[0]), 409, "game_not_started")
    assert stored(game_id) == before
    started = http.post(
        f"/games/{game_id}/start", headers={"Authorization": f"Bearer {lobby.creator}"}
    )
    started.raise_for_status()
    before = stored(game_id)
    refused(resign(lobby, 1, tokens[0]), 403, "not_your_seat")
    refused(resign(lobby, 0), 401, "token_required")
    refused(resign(lobby, 0, lobby.creator), 401, "invalid_token")
    refused(resign(lobby, 0, "not-a-token"), 401, "invalid_token")
    refused(resign(lobby, 5, tokens[0]), 403, "not_your_seat")
    bad_seat = http.post(
        f"/games/{game_id}/seats/99/resign", headers={"Authorization": f"Bearer {tokens[0]}"}
    )
    assert bad_seat.status_code == 400, bad_seat.text
    assert stored(game_id) == before
    assert resign(lobby, 0, tokens[0]).status_code == 200
    wait_for_humans(lobby, {1})  # the bot has played seat 0's setup: the game waits
    before = stored(game_id)
    refused(resign(lobby, 0, tokens[0]), 409, "seat_resigned")
    refused(lobby.act(0, {"type": "setup-flip", "row": 0, "col": 0}), 409, "seat_resigned")
    assert stored(game_id) == before
    play_out(lobby, {1}, random.Random(5))
    before = stored(game_id)
    refused(resign(lobby, 1, tokens[1]), 409, "game_over")
    assert stored(game_id) == before


def test_the_views_show_the_turn_clock_of_whoever_must_act(http: httpx.Client) -> None:
    table = open_table(http, "golf", 2, {"hands": 1, "turn_seconds": 86_400})
    summary = http.get(f"/games/{table.game_id}").json()
    public = table.public()
    to_act = summary["status"]["to_act"]
    assert to_act, "the setup: both seats act"
    for body in (summary, public):
        shown = {s["seat"]: s["turn_deadline"] for s in body["seats"]}
        assert {seat for seat, d in shown.items() if d is not None} == set(to_act)
        for seat in to_act:
            due = datetime.fromisoformat(shown[seat])
            day_ahead = datetime.now(UTC) + timedelta(days=1)
            assert abs((due - day_ahead).total_seconds()) < 120
        assert body["turn_deadline"] == min(d for d in shown.values() if d is not None)
    unclocked = open_table(http, "golf", 2, {"hands": 1})
    plain = http.get(f"/games/{unclocked.game_id}").json()
    assert plain["turn_deadline"] is None
    assert all(s["turn_deadline"] is None for s in plain["seats"])


def test_a_turn_played_for_a_seat_shows_its_hidden_cards_to_nobody_else(
    http: httpx.Client,
) -> None:
    """Tens-shedding for two (one deck: a card's name is the card): the bot chooses seat
    0's face-up stacks from its hand. What seat 0 still holds shows in no response to seat
    1 or a spectator, and a `turn.played_for` discloses its metadata (the move), id and hash
    exactly where the move's own first event does."""
    table = open_table(http, "tens-shedding", 2)
    assert resign(table, 0, table.tokens[0]).status_code == 200
    deadline = time.monotonic() + WAIT
    while not any(e["event"]["type"] == "stacks.chosen" for e in feed(table, 1)):
        assert time.monotonic() < deadline, "the bot did not choose seat 0's stacks"
        time.sleep(0.02)
    hand = list(table.me(0)["view"]["players"][0]["hand"])
    assert hand, "seat 0 holds cards nobody else may know"
    for viewer in (None, 1):
        entries = feed(table, viewer)
        by_version = {e["version"]: e for e in entries}
        for entry in entries:
            if entry["event"]["type"] == "turn.played_for":
                move = by_version[entry["version"] + 1]
                for key in ("metadata", "event_id", "hash"):
                    assert (entry[key] is None) == (move[key] is None), (viewer, key)
        responses = [entries, http.get(f"/games/{table.game_id}").json(), table.public()]
        if viewer is not None:
            responses.append(table.me(viewer))
        for response in responses:
            text = str(response)
            assert not [card for card in hand if f"'{card}'" in text], viewer
    own = [e for e in feed(table, 0) if e["event"]["type"] == "turn.played_for"]
    assert own[0]["metadata"]["played_for"] == "resigned", "seat 0 knows its own move"


def test_a_played_for_draw_from_the_stock_discloses_no_metadata_to_the_others(
    http: httpx.Client,
) -> None:
    """Golf: a card drawn from the stock is its drawer's alone until placed. The played-for
    event that opens such a move keeps its metadata, id and hash from the others, as the
    draw itself does, while the hand is live."""
    table = open_table(http, "golf", 2, {"hands": 2})
    assert resign(table, 0, table.tokens[0]).status_code == 200
    rng = random.Random(9)
    deadline = time.monotonic() + WAIT
    while True:
        assert time.monotonic() < deadline, "no played-for draw from the stock"
        entries = feed(table, 1)
        stock = [
            e
            for e in entries
            if e["event"]["type"] == "card.drawn"
            and e["event"]["card"] is None
            and by(entries, e["version"] - 1)["event"]["type"] == "turn.played_for"
        ]
        if stock:
            break
        status = table.public()["status"]
        if 1 in status["to_act"]:
            legal = table.me(1)["legal_actions"]
            if legal:
                table.act(1, concrete(rng.choice(legal), rng))
        else:
            time.sleep(0.02)
    opener = by(entries, stock[0]["version"] - 1)
    assert opener["metadata"] is None
    assert opener["event_id"] is None
    assert opener["hash"] is None


def by(entries: list[dict[str, Any]], version: int) -> dict[str, Any]:
    return next(e for e in entries if e["version"] == version)


@pytest.fixture(scope="module")
def clocked_base(postgres_server_url: str, api_settings: Settings) -> Iterator[str]:
    """A server of its own, on a database of its own, whose referee's clock runs an hour
    ahead: every turn is out of time as soon as it begins."""
    with throwaway_database(postgres_server_url, "fairway_clocked") as url:
        migrate(url)
        settings = msgspec.structs.replace(api_settings, database_url=url, referee_tick=0.05)
        ahead = timedelta(hours=1)
        with running_server(settings, referee_clock=lambda: datetime.now(UTC) + ahead) as base:
            yield base


def test_a_clocked_game_nobody_plays_finishes_by_timeouts_over_http(clocked_base: str) -> None:
    with httpx.Client(base_url=clocked_base, timeout=20) as http:
        table = open_table(http, "golf", 2, {"hands": 1, "turn_seconds": 5})
        deadline = time.monotonic() + WAIT
        while table.public()["status"]["phase"] != "game_over":
            assert time.monotonic() < deadline, "the clocked game did not finish"
            time.sleep(0.05)
        events = feed(table)
        played = [e for e in events if e["event"]["type"] == "turn.played_for"]
        moves = {e["version"] for e in events if e["metadata"] and "action" in e["metadata"]}
        assert played
        assert {p["event"]["reason"] for p in played} == {"timeout"}
        assert all(e["version"] + 1 in moves for e in played), "each opens a move"
        assert all(p["metadata"]["played_for"] == "timeout" for p in played)
        summary = http.get(f"/games/{table.game_id}").json()
        assert summary["turn_deadline"] is None, "no clock runs in a finished game"
        assert http.get(f"/games/{table.game_id}/audit").json()["ok"] is True
        metrics = http.get("/metrics").text
        assert f'fairway_turns_played_for_total{{reason="timeout"}} {len(played)}' in metrics


def test_a_resign_retried_with_its_idempotency_key_gets_its_first_answer(
    http: httpx.Client,
) -> None:
    """A careful client whose resign's answer was lost (a connection reset, a 503) sends it
    again with the same `Idempotency-Key`: it gets the first answer (200, the same version
    and receipt), not `409 seat_resigned`, and the seat is resigned once. The fault run
    (benchmarks/fault_run.py) found resign taking no key at all."""
    table = open_table(http, "golf", 2)
    key = {"Idempotency-Key": "resign-retry-0123456789abcdef"}
    path = f"/games/{table.game_id}/seats/1/resign"
    first = http.post(path, headers=table.auth(1) | key)
    again = http.post(path, headers=table.auth(1) | key)
    assert first.status_code == 200, first.text
    assert again.status_code == 200, again.text
    assert again.json()["receipt"] == first.json()["receipt"]
    assert again.json()["version"] == first.json()["version"]
    resigned = [e for e in feed(table) if e["event"]["type"] == "seat.resigned"]
    assert len(resigned) == 1, resigned
    other = http.post(path, headers=table.auth(1) | {"Idempotency-Key": "another-key-0123456789"})
    refused(other, 409, "seat_resigned")
