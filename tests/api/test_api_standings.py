"""Standings, round results and ratings over real HTTP, served from real Redis (database 10,
a key prefix of this module's own), the tournament's events appended straight to the
session's PostgreSQL: the tournament service is not needed to read what its events say.

What each answer should say is recomputed from the events (tests/support/tournament_history.py)."""

from __future__ import annotations

import asyncio
import csv
import io
import json
import random
import secrets
import threading
import time
import uuid
from collections.abc import Callable, Iterator
from typing import Any

import httpx
import msgspec
import pytest

from domain.simulate import play_game
from domain.variants import DECIDERS, bot
from events.schema.common import GameOptions
from events.schema.lobby import GameCreated, SeatClaimed
from events.schema.tournament import (
    PlayerRegistered,
    RoundStarted,
    TableSeats,
    TournamentCreated,
)
from events.store.factory import open_store
from service.ops.settings import Settings
from tests.api.server import free_port, running_server
from tests.support.redis_keys import forget
from tests.support.tournament_history import (
    Entry,
    append_history,
    closed_rounds,
    expected_bots,
    expected_standings,
    tournament_history,
)

pytestmark = pytest.mark.api


@pytest.fixture(scope="module")
def base(keeperless_settings: Settings, redis_url: str) -> Iterator[str]:
    prefix = f"stapi{secrets.token_hex(4)}"
    settings = msgspec.structs.replace(
        keeperless_settings,
        redis_url=redis_url,
        redis_prefix=prefix,
        projector_inline=True,
        sse_heartbeat=0.5,  # the standings stream's blank lines, soon enough to see
    )
    with running_server(settings) as served:
        yield served
    asyncio.run(forget(redis_url, prefix))


@pytest.fixture
def http(base: str) -> Iterator[httpx.Client]:
    with httpx.Client(base_url=base, timeout=20) as client:
        yield client


@pytest.fixture
def append(keeperless_database: str) -> Callable[[list[Entry]], None]:
    """Append (part of) a history to the session's database, carrying each stream's version
    from one call to the next."""
    versions: dict[str, int] = {}

    async def go(history: list[Entry]) -> None:
        store = await open_store(keeperless_database, "unused")
        try:
            await append_history(store, history, versions)
        finally:
            await store.close()

    return lambda history: asyncio.run(go(history))


def rows(expected: list[Any], history: list[Entry]) -> list[dict[str, Any]]:
    """The rows as served: each bot player marked with its level."""
    bots = expected_bots(history)
    return [row | {"bot": bots.get(row["player"])} for row in msgspec.to_builtins(expected)]


def once(
    http: httpx.Client, path: str, holds: Callable[[httpx.Response], bool], timeout: float = 60
) -> httpx.Response:
    """`path` once the read model has caught up so that `holds` says yes."""
    deadline = time.monotonic() + timeout
    while True:
        response = http.get(path)
        if holds(response):
            return response
        assert response.status_code in (200, 404, 409, 503), response.text
        assert time.monotonic() < deadline, f"{path} did not catch up: {response.text}"
        time.sleep(0.05)


def tid() -> str:
    return secrets.token_hex(8)


def test_standings_live_and_as_of_each_round_are_those_of_the_events(
    http: httpx.Client, append: Callable[[list[Entry]], None]
) -> None:
    """Given a tournament with closed rounds and one in play, then GET standings is the
    recomputation from its events, live, and `?round=N` is rounds 1..N's alone; a round in
    play is 409, one past the last is 404, an unknown tournament 404."""
    name = tid()
    history = tournament_history(5, tournament=name, players=9, rounds=3, finish=False)
    append(history)
    expected = rows(expected_standings(history), history)
    closed = closed_rounds(history)
    assert closed
    live = once(
        http, f"/tournaments/{name}/standings", lambda r: r.status_code == 200 and
        r.json()["rows"] == expected and r.json()["rounds_closed"] == len(closed)
    ).json()  # fmt: skip
    assert live["tournament_id"] == name
    assert live["live"] is True
    assert live["ended"] is False
    assert live["rounds_closed"] == len(closed)
    for number in closed:
        response = http.get(f"/tournaments/{name}/standings", params={"round": number})
        assert response.status_code == 200, response.text
        body = response.json()
        assert body["rows"] == rows(expected_standings(history, as_of=number), history)
        assert (body["round"], body["live"]) == (number, False)
    in_play = http.get(f"/tournaments/{name}/standings", params={"round": live["round"]})
    assert in_play.status_code == 409
    assert in_play.json()["code"] == "round_not_closed"
    for path, status, code in [
        (f"/tournaments/{name}/standings?round=4", 404, "round_not_found"),
        (f"/tournaments/{tid()}/standings", 404, "tournament_not_found"),
        (f"/tournaments/{name}/standings?round=0", 400, "invalid_request"),
        ("/tournaments/a%20b/standings", 400, "invalid_request"),
        (f"/tournaments/{name}/rounds/9/results", 404, "round_not_found"),
        ("/ratings/" + "x" * 41, 400, "invalid_request"),
        ("/ratings?cursor=nope", 400, "invalid_request"),
    ]:
        response = http.get(path)
        assert response.status_code == status, (path, response.text)
        assert response.json()["code"] == code
        assert response.headers["content-type"].startswith("application/problem+json")


def test_csv_quotes_by_rfc_4180_and_guards_against_formulas(
    http: httpx.Client, append: Callable[[list[Entry]], None]
) -> None:
    name = tid()
    history = tournament_history(8, tournament=name, players=15, rounds=2, finish=True)
    append(history)
    expected = rows(expected_standings(history), history)
    once(
        http, f"/tournaments/{name}/standings", lambda r: r.status_code == 200 and
        r.json()["ended"]
    )  # fmt: skip
    response = http.get(f"/tournaments/{name}/standings", headers={"Accept": "text/csv"})
    assert response.status_code == 200
    assert response.headers["content-type"].startswith("text/csv")
    text = response.content.decode()
    assert text.endswith("\r\n")
    assert all(line for line in text.split("\r\n")[:-1])
    assert '"O\'Neil, Jr."' in text
    assert '"Zoë ""Z"""' in text
    table = list(csv.reader(io.StringIO(text, newline="")))
    assert table[0] == [
        "rank", "player", "total", "games", "hands", "won", "average", "byes", "withdrawn", "bot"
    ]  # fmt: skip
    assert [row[9] for row in table[1:]] == [r["bot"] or "" for r in expected]
    players = [row[1] for row in table[1:]]
    assert "'=cmd" in players
    assert "=cmd" not in players
    assert [p.removeprefix("'") for p in players] == [r["player"] for r in expected]
    assert [int(row[2]) for row in table[1:]] == [r["total"] for r in expected]
    assert [row[6] for row in table[1:]] == [
        "" if r["average"] is None else f"{r['average']:g}" for r in expected
    ]
    json_again = http.get(f"/tournaments/{name}/standings", headers={"Accept": "*/*"})
    assert json_again.headers["content-type"].startswith("application/json")


def test_round_results_table_by_table_with_links(
    http: httpx.Client, append: Callable[[list[Entry]], None]
) -> None:
    name = tid()
    history = tournament_history(13, tournament=name, players=8, rounds=2, finish=False)
    append(history)
    expected = rows(expected_standings(history), history)
    once(
        http, f"/tournaments/{name}/standings", lambda r: r.status_code == 200 and
        r.json()["rows"] == expected
    )  # fmt: skip
    closes = {e.round: e for _, e in history if type(e).__name__ == "RoundClosed"}
    bots = expected_bots(history)
    assert bots, "the history seats bot players"
    for number, closed in closes.items():
        body = http.get(f"/tournaments/{name}/rounds/{number}/results").json()
        assert body["status"] == "closed"
        assert body["byes"] == list(closed.byes)
        assert body["bye_score"] == closed.bye_score
        for line, result in zip(body["tables"], closed.results, strict=True):
            assert (line["game_id"], line["players"], line["totals"], line["winners"]) == (
                result.game_id,
                list(result.players),
                list(result.totals),
                list(result.winners),
            )
            assert line["bots"] == [bots.get(player) for player in result.players]
            game = f"/games/{result.game_id}"
            assert line["links"] == {
                "game": game,
                "export": f"{game}/export",
                "replays": [f"{game}/hands/{h}/replay" for h in range(1, result.hands + 1)],
            }
    started = [e for _, e in history if type(e).__name__ == "RoundStarted"]
    if started[-1].round not in closes:
        seen: dict[str, set[str]] = {}
        for stream, event in history:
            seen.setdefault(stream.removeprefix("game:"), set()).add(type(event).__name__)
        phases = [
            "ended" if "GameEnded" in kinds else "playing" if "GameStarted" in kinds
            else "waiting"
            for kinds in (seen[t.game_id] for t in started[-1].tables)
        ]  # fmt: skip
        path = f"/tournaments/{name}/rounds/{started[-1].round}/results"
        live = once(  # a game's start changes no standings: the results may trail a moment
            http, path, lambda r: [t["status"] for t in r.json()["tables"]] == phases
        ).json()
        assert live["status"] == "playing"
        assert live["bye_score"] is None


def real_game(tournament: str, names: tuple[str, ...], seed: int) -> tuple[str, list[Any]]:
    """A game of the tournament played by bots with real cards, cut while in play."""
    rng = random.Random(seed)
    game = uuid.UUID(int=rng.getrandbits(128)).hex[:16]
    options = GameOptions(hands=3)
    played = play_game(
        DECIDERS["golf"], len(names), [bot("greedy", "golf")] * len(names), b"s" * 32, rng, options
    )
    ended = [i for i, e in enumerate(played.events) if type(e).__name__ == "HandEnded"]
    assert len(ended) >= 2
    events = [
        GameCreated("golf", len(names), options, "c" * 64, tournament=tournament, round=1, table=1),
        *(SeatClaimed(seat, n, f"{seat:x}" * 64) for seat, n in enumerate(names)),
        *played.events[: ended[0] + 5],  # past the first hand's end: cards in play
    ]
    return game, events


def strings(value: Any) -> set[str]:
    if isinstance(value, str):
        return {value}
    if isinstance(value, dict):
        return {s for v in value.values() for s in strings(v)}
    if isinstance(value, list | tuple):
        return {s for v in value for s in strings(v)}
    return set()


def test_no_answer_holds_a_card_of_a_live_game(
    http: httpx.Client, append: Callable[[list[Entry]], None]
) -> None:
    """Given a tournament whose live game has cards on the table, then its standings,
    results and the players' ratings hold no text that any of its events hold but names and
    ids: no card, no seed, no hash."""
    name = tid()
    names = (f"Ann {name[:4]}", f"Bob {name[:4]}", f"Cat {name[:4]}")
    game, events = real_game(name, names, 3)
    append(
        [
            (
                f"tournament:{name}",
                TournamentCreated(
                    "Live", "golf", GameOptions(), 3, 1, "swiss", False, "o" * 64, "a" * 64
                ),
            ),
            *((f"tournament:{name}", PlayerRegistered(n, "b" * 64)) for n in names),
            *((f"game:{game}", e) for e in events),
            (f"tournament:{name}", RoundStarted(1, (TableSeats(1, game, names),))),
        ]
    )
    standings = once(
        http, f"/tournaments/{name}/standings", lambda r: r.status_code == 200 and
        r.json()["rows"][0]["hands"] >= 1
    ).json()  # fmt: skip
    results = http.get(f"/tournaments/{name}/rounds/1/results").json()
    assert results["tables"][0]["status"] == "playing"
    secret = strings(msgspec.to_builtins(events)) - {*names, game, name, "golf"}
    assert secret
    served = strings(standings) | strings(results)
    assert not served & secret, served & secret
    assert not any(key in json.dumps(standings) for key in ('"cards"', '"deck"', '"seed"'))


def test_the_stream_sends_the_standings_then_a_line_when_a_round_closes_then_ends(
    http: httpx.Client, base: str, append: Callable[[list[Entry]], None]
) -> None:
    name = tid()
    history = tournament_history(21, tournament=name, players=8, rounds=2, finish=True)
    first_close = next(i for i, (_, e) in enumerate(history) if type(e).__name__ == "RoundClosed")
    append(history[:first_close])
    before = rows(expected_standings(history[:first_close]), history)
    once(  # the read model has caught up: nothing changes until round 1 closes
        http, f"/tournaments/{name}/standings", lambda r: r.status_code == 200 and
        r.json()["rows"] == before
    )  # fmt: skip
    got: list[dict[str, Any]] = []
    blank = [0]
    finished = threading.Event()

    def read() -> None:
        with (
            httpx.Client(base_url=base, timeout=60) as client,
            client.stream("GET", f"/tournaments/{name}/standings/stream") as response,
        ):
            assert response.headers["content-type"].startswith("application/x-ndjson")
            for line in response.iter_lines():
                if line:
                    got.append(json.loads(line))
                else:
                    blank[0] += 1
        finished.set()

    reader = threading.Thread(target=read, daemon=True)
    reader.start()
    deadline = time.monotonic() + 30
    while not got and time.monotonic() < deadline:
        time.sleep(0.05)
    assert got, "no first line"
    assert got[0]["rounds_closed"] == 0
    while not blank[0] and time.monotonic() < deadline:  # nothing changes: a heartbeat
        time.sleep(0.05)
    assert blank[0] >= 1
    assert len(got) == 1
    append(history[first_close : first_close + 1])  # round 1 closes
    while not any(line["rounds_closed"] == 1 for line in got) and time.monotonic() < deadline:
        time.sleep(0.05)
    closed = next(line for line in got if line["rounds_closed"] == 1)
    assert closed["rows"] == rows(expected_standings(history[: first_close + 1]), history)
    append(history[first_close + 1 :])  # round 2 plays, closes, and the tournament ends
    assert finished.wait(30), "the stream did not end after the tournament ended"
    assert got[-1]["ended"] is True
    assert got[-1]["rows"] == rows(expected_standings(history), history)
    # One encoding for both: an average is a number with a fraction part on either
    # (json.dumps tells 7 from 7.0; Python's == does not).
    answered = http.get(f"/tournaments/{name}/standings").json()["rows"]
    assert json.dumps(answered) == json.dumps(got[-1]["rows"])
    assert any(isinstance(row["average"], float) for row in answered)
    revisions = [line["revision"] for line in got]
    assert revisions == sorted(set(revisions))
    keys = ("rows", "round", "live", "rounds_closed", "ended")
    said = [tuple(json.dumps(line[k]) for k in keys) for line in got]
    assert len(said) == len(set(said))  # no line repeats the one before


def test_ratings_rank_the_winners_and_page_the_leaderboard(
    http: httpx.Client, append: Callable[[list[Entry]], None]
) -> None:
    name = tid()
    tag = name[:6]
    winner, loser = f"Win {tag}", f"Lose {tag}"
    game = secrets.token_hex(8)
    from events.schema.common import GameEnded, GameStarted, HandEnded

    append(
        [
            (f"game:{game}", GameCreated("basketball", 2, GameOptions(), "c" * 64)),
            (f"game:{game}", SeatClaimed(0, loser, "a" * 64)),
            (f"game:{game}", SeatClaimed(1, winner, "b" * 64)),
            (f"game:{game}", GameStarted("basketball", 2, GameOptions())),
            (f"game:{game}", HandEnded(1, "out", "", (3, 9), (3, 9))),
            (f"game:{game}", GameEnded((3, 9), (1,))),  # Basketball: high wins
        ]
    )
    won = once(http, f"/ratings/{winner}", lambda r: r.status_code == 200).json()
    lost = http.get(f"/ratings/{loser}").json()
    assert won["games"] == lost["games"] == 1
    assert won["mu"] > 25 > lost["mu"]
    assert won["ordinal"] == pytest.approx(won["mu"] - 3 * won["sigma"], abs=1e-5)
    assert http.get(f"/ratings/Nobody {tag}").json()["code"] == "rating_not_found"
    seen, cursor = [], None
    while True:
        params: dict[str, Any] = {"limit": 3} | ({"cursor": cursor} if cursor else {})
        page = http.get("/ratings", params=params).json()
        seen += page["ratings"]
        cursor = page["next_cursor"]
        if cursor is None:
            break
    order = [(-r["ordinal"], r["name"]) for r in seen]
    assert order == sorted(order)
    assert seen.index(won) < seen.index(lost)


def test_without_redis_the_standings_and_ratings_are_503(api_settings: Settings) -> None:
    dead = msgspec.structs.replace(
        api_settings, redis_url=f"redis://127.0.0.1:{free_port()}", redis_prefix="stdead"
    )
    with running_server(dead) as served, httpx.Client(base_url=served, timeout=20) as client:
        for path in (
            f"/tournaments/{tid()}/standings",
            f"/tournaments/{tid()}/standings/stream",
            f"/tournaments/{tid()}/rounds/1/results",
            "/ratings",
            "/ratings/Ada",
        ):
            response = client.get(path)
            assert response.status_code == 503, (path, response.text)
            assert response.json()["code"] == "projections_unavailable"
            assert response.headers["retry-after"] == "1"
