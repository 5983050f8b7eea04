"""A whole tournament over HTTP, as the issue asks: 12 players, 3 tables of 4, 3 duplicate
rounds seated Swiss, played by greedy bots with the players' own tokens, for a low-wins
variant (Golf) and the high-wins one (Basketball). In round 2 one table is left alone and
finished by its turn clocks; in round 3 a player withdraws mid-round and the referee plays
their seat out.

Then: the standings the server reads from Redis equal the standings recomputed here from
the stored events of the games themselves (not from the tournament's `round.closed`
results, nor from the read model's code): now, and as of each round N from rounds 1..N
alone; every table of a round was dealt the same cards; the tournament's audit passes.

One server, with its own PostgreSQL database and Redis key space, its round keeper and its
referee; the referee's clock is the test's (real time plus an offset the test moves), so a
turn clock runs out without the test waiting for it.
"""

from __future__ import annotations

import asyncio
import random
import secrets
import time
from collections.abc import Callable, Iterator
from datetime import UTC, datetime, timedelta
from typing import Any

import httpx
import msgspec
import psycopg
import pytest

from domain.tournament.standings import RoundResult, Row, Seat, round_mean, standings
from domain.variants import bot, decider_for, high_wins
from events.migrate import migrate
from service.ops.settings import Settings
from tests.api.server import running_server
from tests.support.redis_keys import forget
from tests.support.services import throwaway_database
from tests.support.tournaments import decode_view

pytestmark = pytest.mark.api

WAIT = 120.0
PLAYERS = [f"Player {i:02}" for i in range(12)]
TURN_SECONDS = 3600
"""Long enough that no clock runs out while the bots play; the test moves its clock past
it when it wants a table finished by timeouts."""


class Clock:
    """The referee's clock: real time plus an offset the test sets."""

    def __init__(self) -> None:
        self.offset = timedelta(0)

    def __call__(self) -> datetime:
        return datetime.now(UTC) + self.offset


@pytest.fixture(scope="module")
def clock() -> Clock:
    return Clock()


@pytest.fixture(scope="module")
def whole_database(postgres_server_url: str) -> Iterator[str]:
    with throwaway_database(postgres_server_url, "fairway_whole") as url:
        migrate(url)
        yield url


@pytest.fixture(scope="module")
def base(
    api_settings: Settings, redis_url: str, whole_database: str, clock: Clock
) -> Iterator[str]:
    prefix = f"whole{secrets.token_hex(4)}"
    settings = msgspec.structs.replace(
        api_settings,
        database_url=whole_database,
        redis_url=redis_url,
        redis_prefix=prefix,
        projector_inline=True,
        referee_tick=0.05,
    )
    with running_server(settings, referee_clock=clock) as address:
        yield address
    asyncio.run(forget(redis_url, prefix))


@pytest.fixture
def http(base: str) -> Iterator[httpx.Client]:
    with httpx.Client(base_url=base, timeout=30) as client:
        yield client


@pytest.fixture
def rows(whole_database: str) -> Callable[[str], list[dict[str, Any]]]:
    """A stream's stored events straight from PostgreSQL, as JSON objects."""

    return lambda stream: [data for data, _ in stored(whole_database, stream)]


@pytest.fixture
def metadata(whole_database: str) -> Callable[[str], list[dict[str, Any]]]:
    """Each stored event's metadata, in the stream's order."""
    return lambda stream: [meta for _, meta in stored(whole_database, stream)]


def stored(database: str, stream: str) -> list[tuple[dict[str, Any], dict[str, Any]]]:
    with psycopg.connect(database, autocommit=True) as conn:
        found = conn.execute(
            "SELECT data::text, metadata::text FROM events WHERE stream_id = %s "
            "ORDER BY stream_version",
            (stream,),
        ).fetchall()
    return [(msgspec.json.decode(data), msgspec.json.decode(meta)) for data, meta in found]


# ---- the organiser and the players, over HTTP --------------------------------------------


class Event:
    def __init__(self, http: httpx.Client, variant: str, options: dict[str, Any]) -> None:
        body = {
            "name": f"{variant} open",
            "variant": variant,
            "table_size": 4,
            "rounds": 3,
            "seating": "swiss",
            "duplicate": True,
            "options": options | {"turn_seconds": TURN_SECONDS},
        }
        created = http.post("/tournaments", json=body)
        assert created.status_code == 201, created.text
        self.http = http
        self.id = created.json()["tournament_id"]
        self.organiser = created.json()["organiser_token"]
        self.tokens: dict[str, str] = {}
        for name in PLAYERS:
            added = http.post(
                f"/tournaments/{self.id}/players", json={"name": name}, headers=self.auth()
            )
            assert added.status_code == 201, added.text
            self.tokens[name] = added.json()["token"]

    def auth(self, token: str | None = None) -> dict[str, str]:
        return {"Authorization": f"Bearer {token or self.organiser}"}

    def get(self) -> dict[str, Any]:
        response = self.http.get(f"/tournaments/{self.id}")
        assert response.status_code == 200, response.text
        return response.json()  # type: ignore[no-any-return]

    def start_round(self) -> list[dict[str, Any]]:
        started = self.http.post(f"/tournaments/{self.id}/rounds", headers=self.auth())
        assert started.status_code == 201, started.text
        tables: list[dict[str, Any]] = started.json()["tables"]
        assert [len(t["players"]) for t in tables] == [4, 4, 4]
        return tables

    def wait_closed(self, number: int) -> dict[str, Any]:
        deadline = time.monotonic() + WAIT
        while time.monotonic() < deadline:
            body = self.get()
            played = body["played"]
            if len(played) >= number and played[number - 1]["state"] == "closed":
                return body
            time.sleep(0.1)
        raise AssertionError(f"round {number} did not close by itself")


def play(
    http: httpx.Client,
    event: Event,
    game_id: str,
    seed: int,
    *,
    skip: frozenset[str] = frozenset(),
    actions: int | None = None,
) -> int:
    """Play the game's seats with greedy bots, each with its player's token, until the game
    is over (or after `actions` actions). Seats of players in `skip` are the referee's: the
    bots wait while only those may act. Returns how many actions the bots posted."""
    rng = random.Random(seed)
    names = [seat["name"] for seat in http.get(f"/games/{game_id}").json()["seats"]]
    variant = http.get(f"/games/{game_id}").json()["variant"]
    decider, greedy = decider_for(variant), bot("greedy", variant)
    reader = {"Authorization": f"Bearer {event.tokens[next(n for n in names if n not in skip)]}"}
    posted = 0
    deadline = time.monotonic() + WAIT
    while time.monotonic() < deadline:
        status = http.get(f"/games/{game_id}/me", headers=reader).json()["status"]
        if status["phase"] == "game_over" or (actions is not None and posted >= actions):
            return posted
        ours = [seat for seat in status["to_act"] if names[seat] not in skip]
        if not ours:  # only a seat the referee plays may act
            time.sleep(0.02)
            continue
        seat = rng.choice(ours)
        auth = {"Authorization": f"Bearer {event.tokens[names[seat]]}"}
        me = http.get(f"/games/{game_id}/me", headers=auth).json()
        if not me["legal_actions"]:
            continue  # the referee moved in between
        view, legal = decode_view(decider, me)
        action = decider.pick(greedy.choose(view, legal, rng), rng)
        response = http.post(
            f"/games/{game_id}/actions", json=msgspec.to_builtins(action), headers=auth
        )
        if response.status_code == 409:  # the referee played a seat in between: look again
            continue
        assert response.status_code == 200, response.text
        posted += 1
    raise AssertionError(f"game {game_id} did not end")


# ---- the standings, recomputed from the games' own events --------------------------------


def people(expected: list[Row]) -> list[dict[str, Any]]:
    """The rows as served for players who are all people (no `bot` level)."""
    return [row | {"bot": None} for row in msgspec.to_builtins(expected)]


def recomputed(
    rows: Callable[[str], list[dict[str, Any]]], event: Event, variant: str, upto: int | None
) -> list[Row]:
    """The standings from the stored events of each round's games: seat totals and winners
    from `game.ended`, hands from `hand.ended`, resigned seats from `seat.resigned`, the bye
    score as the documented mean of the round's seat totals; as of round `upto` when given
    (rounds 1..upto, and only the withdrawals made before it closed)."""
    tournament = rows(f"tournament:{event.id}")
    players = [e["name"] for e in tournament if e["type"] == "player.registered"]
    rounds, withdrawn = [], []
    for entry in tournament:
        if entry["type"] == "player.withdrawn":
            withdrawn.append(entry["name"])
        if entry["type"] == "round.closed" and entry["round"] == upto:
            break
        if entry["type"] != "round.started" or (upto is not None and entry["round"] > upto):
            continue
        seats, totals = [], []
        for table in entry["tables"]:
            game = rows(f"game:{table['game_id']}")
            ended = next(e for e in game if e["type"] == "game.ended")
            resigned = {e["seat"] for e in game if e["type"] == "seat.resigned"}
            hands = sum(e["type"] == "hand.ended" for e in game)
            for seat, player in enumerate(table["players"]):
                won = seat in ended["winners"] and seat not in resigned
                seats.append(Seat(player, ended["totals"][seat], hands, won))
            totals += ended["totals"]
        rounds.append(
            RoundResult(entry["round"], tuple(seats), tuple(entry["byes"]), round_mean(totals))
        )
    return standings(players, rounds, high_wins(variant), withdrawn)


def served(http: httpx.Client, event: Event, query: str = "") -> list[dict[str, Any]]:
    deadline = time.monotonic() + WAIT
    while True:
        response = http.get(f"/tournaments/{event.id}/standings{query}")
        if response.status_code == 200 and (query or response.json()["ended"]):
            return response.json()["rows"]  # type: ignore[no-any-return]
        assert time.monotonic() < deadline, response.text
        time.sleep(0.1)


def played_for(game: list[dict[str, Any]]) -> list[tuple[int, str]]:
    return [(e["seat"], e["reason"]) for e in game if e["type"] == "turn.played_for"]


# ---- the tournament ------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("variant", "options"), [("golf", {"hands": 2}), ("basketball", {})], ids=["golf", "basketball"]
)
def test_a_whole_tournament_of_twelve_players_three_tables_three_rounds(
    http: httpx.Client,
    rows: Callable[[str], list[dict[str, Any]]],
    metadata: Callable[[str], list[dict[str, Any]]],
    clock: Clock,
    variant: str,
    options: dict[str, Any],
) -> None:
    event = Event(http, variant, options)

    # Round 1: every table played out by the bots.
    for i, table in enumerate(event.start_round()):
        play(http, event, table["game_id"], seed=100 + i)
    event.wait_closed(1)

    # Round 2: two tables played by the bots; the third left alone until its clocks run out.
    tables = event.start_round()
    for i, table in enumerate(tables[:2]):
        play(http, event, table["game_id"], seed=200 + i)
    idle = tables[2]["game_id"]
    clock.offset = timedelta(seconds=TURN_SECONDS + 60)
    try:
        event.wait_closed(2)
    finally:
        clock.offset = timedelta(0)
    timed_out = rows(f"game:{idle}")
    assert played_for(timed_out), "the idle table was played by its clocks"
    assert {reason for _, reason in played_for(timed_out)} == {"timeout"}
    acted = [meta for meta in metadata(f"game:{idle}") if "seat" in meta]
    assert len(acted) >= len(played_for(timed_out))
    assert {meta.get("played_for") for meta in acted} == {"timeout"}, "no seat acted itself"

    # Round 3: a player withdraws mid-round; the referee plays their seat out.
    tables = event.start_round()
    leaving_table = tables[0]
    leaving = leaving_table["players"][1]
    play(http, event, leaving_table["game_id"], seed=300, actions=6)
    gone = http.post(f"/tournaments/{event.id}/players/{leaving}/withdraw", headers=event.auth())
    assert gone.status_code == 200, gone.text
    assert gone.json()["resigned_games"] == [leaving_table["game_id"]]
    for i, table in enumerate(tables):
        play(http, event, table["game_id"], seed=310 + i, skip=frozenset({leaving}))
    body = event.wait_closed(3)
    assert body["phase"] == "ended"
    left = rows(f"game:{leaving_table['game_id']}")
    seat = leaving_table["players"].index(leaving)
    assert [e for e in left if e["type"] == "seat.resigned"] == [
        {"type": "seat.resigned", "seat": seat, "reason": "withdrawn"}
    ]
    if any(e["type"] == "turn.played_for" for e in left):  # the seat had turns left
        assert set(played_for(left)) == {(seat, "withdrawn")}

    # The standings from Redis are those recomputed from the games' events...
    final = served(http, event)
    expected = people(recomputed(rows, event, variant, None))
    assert final == expected
    assert next(r for r in final if r["player"] == leaving)["withdrawn"] is True
    best = final[0]["total"]
    totals = [r["total"] for r in final]
    assert best == (max(totals) if high_wins(variant) else min(totals))
    # ...and as of each round, from that round's and the earlier rounds' games alone.
    for number in (1, 2, 3):
        as_of = served(http, event, f"?round={number}")
        assert as_of == people(recomputed(rows, event, variant, number))

    # Duplicate deals: every table of a round was dealt the same cards, hand by hand.
    for played in body["played"]:
        decks = [
            [e["seed"] for e in rows(f"game:{t['game_id']}") if e["type"] == "hand.dealt"]
            for t in played["tables"]
        ]
        assert decks[0], played["round"]
        assert all(deck == decks[0] for deck in decks), played["round"]
    audit = http.get(f"/tournaments/{event.id}/audit")
    assert audit.status_code == 200, audit.text
    assert audit.json()["ok"] is True, audit.json()
