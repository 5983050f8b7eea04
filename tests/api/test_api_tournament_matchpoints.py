"""A whole duplicate tournament scored by matchpoints, over real HTTP: 7 players at tables of
2 (three tables and a bye a round), two rounds of two-hand Golf, seated Swiss. Three are
bot players, played by the service's bot runner; the four people are played by greedy bots
here, posting each seat's moves with its player's token. The people's tables are played one
after another, so the test sees each round while its deals are still to come at a table.

Then: before no table is left to play a deal, neither its travellers nor any matchpoint is
shown (hand 1 is `409 deals_to_come` and every percentage null, even with a table over);
once the tournament has ended, the standings and every traveller the server reads from Redis
equal a recomputation from the games' own stored events (`hand.ended` scores, by the
domain's matchpoint function), now and as of each round; the CSVs say the same; each
traveller's replay link answers; the tournament audit's travellers are the same boards.
"""

from __future__ import annotations

import asyncio
import csv
import io
import random
import secrets
import time
from collections.abc import Callable, Iterator
from typing import Any

import httpx
import msgspec
import psycopg
import pytest

from domain.tournament import matchpoints as mp
from domain.variants import bot, decider_for
from events.migrate import migrate
from service.ops.settings import Settings
from tests.api.server import running_server
from tests.support.redis_keys import forget
from tests.support.services import throwaway_database
from tests.support.tournaments import decode_view

pytestmark = pytest.mark.api

WAIT = 180.0
PLAYERS = [f"P{i}" for i in range(7)]
BOTS = {"P0": "greedy", "P1": "random", "P2": "greedy"}
"""Bot players (their seats played by the bot runner); the others are people."""
Rows = Callable[[str], list[dict[str, Any]]]
MATCHPOINT_FIELDS = ("rank", "player", "percent", "matchpoints", "top", "boards", "byes")


@pytest.fixture(scope="module")
def server(api_settings: Settings, postgres_server_url: str, redis_url: str) -> Iterator[Any]:
    """A server of its own (database, Redis key space) with its round keeper and an inline
    projector. Yields its base URL and a reader of a stream's stored events."""
    prefix = f"mp{secrets.token_hex(4)}"
    with throwaway_database(postgres_server_url, "fairway_matchpoints") as database:
        migrate(database)
        settings = msgspec.structs.replace(
            api_settings,
            database_url=database,
            redis_url=redis_url,
            redis_prefix=prefix,
            projector_inline=True,
            bot_think=0.0,
        )

        def rows(stream: str) -> list[dict[str, Any]]:
            with psycopg.connect(database, autocommit=True) as conn:
                found = conn.execute(
                    "SELECT data::text FROM events WHERE stream_id = %s ORDER BY stream_version",
                    (stream,),
                ).fetchall()
            return [msgspec.json.decode(data) for (data,) in found]

        with running_server(settings) as base:
            yield base, rows
    asyncio.run(forget(redis_url, prefix))


def until(what: str, read: Callable[[], Any], holds: Callable[[Any], bool]) -> Any:
    deadline = time.monotonic() + WAIT
    while True:
        found = read()
        if holds(found):
            return found
        assert time.monotonic() < deadline, f"{what} did not happen: {found}"
        time.sleep(0.1)


def play(http: httpx.Client, tokens: dict[str, str], game_id: str, seed: int) -> None:
    """Every person's seat of the game played by the greedy bot with its player's token, to
    the end (the bot runner plays the bot seats: while only they may act, wait)."""
    rng = random.Random(seed)
    game = http.get(f"/games/{game_id}").json()
    names = [seat["name"] for seat in game["seats"]]
    decider, greedy = decider_for(game["variant"]), bot("greedy", game["variant"])
    person = next(name for name in names if name in tokens)
    deadline = time.monotonic() + WAIT
    while time.monotonic() < deadline:
        auth = {"Authorization": f"Bearer {tokens[person]}"}
        status = http.get(f"/games/{game_id}/me", headers=auth).json()["status"]
        if status["phase"] == "game_over":
            return
        ours = [seat for seat in status["to_act"] if names[seat] in tokens]
        if not ours:
            time.sleep(0.02)
            continue
        seat = rng.choice(ours)
        auth = {"Authorization": f"Bearer {tokens[names[seat]]}"}
        view, legal = decode_view(decider, http.get(f"/games/{game_id}/me", headers=auth).json())
        action = decider.pick(greedy.choose(view, legal, rng), rng)
        posted = http.post(
            f"/games/{game_id}/actions", json=msgspec.to_builtins(action), headers=auth
        )
        if posted.status_code == 409:  # a bot seat moved in between: look again
            continue
        assert posted.status_code == 200, posted.text
    raise AssertionError(f"game {game_id} did not end")


# ---- the recomputation from the games' own events ----------------------------------------


def boards_of(rows: Rows, tid: str, number: int) -> list[mp.Board]:
    """Round `number`'s boards from each table's stored `hand.ended` scores."""
    started = next(
        e
        for e in rows(f"tournament:{tid}")
        if e["type"] == "round.started" and e["round"] == number
    )
    tables = [
        mp.TableHands(
            table["table"],
            table["game_id"],
            tuple(table["players"]),
            tuple(
                tuple(e["scores"])
                for e in rows(f"game:{table['game_id']}")
                if e["type"] == "hand.ended"
            ),
        )
        for table in started["tables"]
    ]
    return mp.travellers(number, tables, high_wins=False)


def standings_of(rows: Rows, tid: str, upto: int | None) -> list[dict[str, Any]]:
    """The matchpoint standings from the games' events: rounds 1..`upto` (all: None)."""
    stream = rows(f"tournament:{tid}")
    players = [e["name"] for e in stream if e["type"] == "player.registered"]
    boards: list[mp.Board] = []
    byes: list[str] = []
    for entry in stream:
        if entry["type"] == "round.started" and (upto is None or entry["round"] <= upto):
            boards += boards_of(rows, tid, entry["round"])
            byes += entry["byes"]
    return [
        {
            name: value
            for name, value in msgspec.to_builtins(row).items()
            if name in MATCHPOINT_FIELDS
        }
        for row in mp.standings(players, boards, byes)
    ]


def shown(rows: list[dict[str, Any]]) -> list[dict[str, Any]]:
    return [{name: row[name] for name in MATCHPOINT_FIELDS} for row in rows]


def traveller_json(board: mp.Board) -> dict[str, Any]:
    return {
        "hand": board.hand,
        "seat": board.seat,
        "entries": [
            msgspec.to_builtins(entry)
            | {"replay": f"/games/{entry.game_id}/hands/{board.hand}/replay"}
            for entry in board.entries
        ],
    }


# ---- the tournament ------------------------------------------------------------------------


def test_a_whole_duplicate_tournament_scored_by_matchpoints(server: Any) -> None:
    base, rows = server
    with httpx.Client(base_url=base, timeout=30) as http:
        body = {
            "name": "Matchpoint night",
            "variant": "golf",
            "table_size": 2,
            "rounds": 2,
            "duplicate": True,
            "scoring": "matchpoints",
            "options": {"hands": 2},
        }
        refused = http.post("/tournaments", json=body | {"duplicate": False})
        assert refused.status_code == 422, refused.text
        assert refused.json()["code"] == "invalid_config"
        assert "duplicate" in refused.json()["detail"]
        created = http.post("/tournaments", json=body)
        assert created.status_code == 201, created.text
        tid, organiser = created.json()["tournament_id"], created.json()["organiser_token"]
        auth = {"Authorization": f"Bearer {organiser}"}
        assert http.get(f"/tournaments/{tid}").json()["scoring"] == "matchpoints"
        tokens = {}
        for name in PLAYERS:
            entry = {"name": name} | ({"bot": BOTS[name]} if name in BOTS else {})
            added = http.post(f"/tournaments/{tid}/players", json=entry, headers=auth)
            assert added.status_code == 201, added.text
            if name not in BOTS:
                tokens[name] = added.json()["token"]
        path = f"/tournaments/{tid}"

        for number in (1, 2):
            started = http.post(f"{path}/rounds", headers=auth)
            assert started.status_code == 201, started.text
            tables = started.json()["tables"]
            assert [len(t["players"]) for t in tables] == [2, 2, 2]
            # Every table but the last with a person over (the bots' own tables play by
            # themselves), that one still to play the same cards: nothing is shown.
            people = [t for t in tables if set(t["players"]) - set(BOTS)]
            assert people
            for i, table in enumerate(people[:-1]):
                play(http, tokens, table["game_id"], seed=10 * number + i)
            travellers = f"{path}/rounds/{number}/travellers"
            live = until(
                "the live round read",
                lambda: http.get(travellers),  # noqa: B023
                lambda r: r.status_code == 200 and r.json()["status"] == "playing",
            ).json()
            assert (live["hands"], live["travellers"]) == (0, [])
            hidden = http.get(travellers, params={"hand": 1, "seat": 0})
            assert hidden.status_code == 409, hidden.text
            assert hidden.json()["code"] == "deals_to_come"
            now = http.get(f"{path}/standings").json()
            assert now["scoring"] == "matchpoints"
            assert now["live"] is True
            # This round's boards count for nobody yet: the standings are the last round's.
            if number == 1:
                assert {row["percent"] for row in now["rows"]} == {None}
            else:
                assert shown(now["rows"]) == standings_of(rows, tid, number - 1)
            play(http, tokens, people[-1]["game_id"], seed=10 * number + 9)
            until(
                f"round {number} closed",
                lambda: http.get(path).json()["played"],
                lambda played: len(played) == number and played[-1]["state"] == "closed",  # noqa: B023
            )
        assert http.get(path).json()["phase"] == "ended"

        # The standings from Redis: the recomputation from the games' events, now and as of
        # each round; JSON and CSV alike.
        final = until(
            "the final standings",
            lambda: http.get(f"{path}/standings"),
            lambda r: r.status_code == 200 and r.json()["ended"],
        ).json()
        assert shown(final["rows"]) == standings_of(rows, tid, None)
        assert all(row["percent"] is not None for row in final["rows"])
        # the bot players are marked, and played their boards like anyone
        assert {row["player"]: row["bot"] for row in final["rows"]} == {
            name: BOTS.get(name) for name in PLAYERS
        }
        assert all(row["boards"] > 0 for row in final["rows"])
        sheet = list(
            csv.DictReader(
                io.StringIO(http.get(f"{path}/standings", headers={"Accept": "text/csv"}).text)
            )
        )
        assert [(r["player"], float(r["percent"]), int(r["matchpoints"])) for r in sheet] == [
            (r["player"], r["percent"], r["matchpoints"]) for r in final["rows"]
        ]
        streamed = http.get(f"{path}/standings/stream").text.strip().splitlines()
        assert [msgspec.json.decode(line)["rows"] for line in streamed] == [final["rows"]]
        for number in (1, 2):
            as_of = http.get(f"{path}/standings", params={"round": number}).json()
            assert shown(as_of["rows"]) == standings_of(rows, tid, number)

        # Every traveller, whole and one by one, JSON and CSV; each replay link answers.
        audit = http.get(f"{path}/audit").json()
        assert audit["ok"], audit["failures"]
        everything = []
        for number in (1, 2):
            expected = [traveller_json(board) for board in boards_of(rows, tid, number)]
            everything += expected
            whole = http.get(f"{path}/rounds/{number}/travellers").json()
            assert (whole["status"], whole["hands"]) == ("closed", 2)
            assert whole["travellers"] == expected
            for board in expected:
                one = http.get(
                    f"{path}/rounds/{number}/travellers",
                    params={"hand": board["hand"], "seat": board["seat"]},
                ).json()
                assert one["travellers"] == [board]
                for entry in board["entries"]:
                    replay = http.get(entry["replay"])
                    assert replay.status_code == 200, replay.text
                    assert sum(1 for _ in replay.json()["steps"]) > 0
            sheet = list(
                csv.DictReader(
                    io.StringIO(
                        http.get(
                            f"{path}/rounds/{number}/travellers", headers={"Accept": "text/csv"}
                        ).text
                    )
                )
            )
            assert [
                (int(r["hand"]), int(r["seat"]), r["player"], int(r["matchpoints"])) for r in sheet
            ] == [
                (b["hand"], b["seat"], e["player"], e["matchpoints"])
                for b in expected
                for e in b["entries"]
            ]
        assert [
            {"hand": b["hand"], "seat": b["seat"], "entries": b["entries"]}
            for b in audit["travellers"]
        ] == [
            {
                "hand": b["hand"],
                "seat": b["seat"],
                "entries": [{k: v for k, v in e.items() if k != "replay"} for e in b["entries"]],
            }
            for b in everything
        ]
        assert http.get(f"{path}/rounds/1/travellers", params={"hand": 3}).status_code == 404
        assert http.get(f"{path}/rounds/1/travellers", params={"seat": 2}).status_code == 422
        assert http.get(f"{path}/rounds/3/travellers").status_code == 404
