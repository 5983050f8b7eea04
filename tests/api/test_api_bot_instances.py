"""Two instances on one database, both running the bot runner: every bot move is stored
once (each instance tries it; the expected version lets one append) and the game ends."""

from __future__ import annotations

import json
import re
import time
from collections.abc import Iterator
from pathlib import Path

import httpx
import msgspec
import psycopg
import pytest

from service.ops.settings import Settings
from tests.api.server import instance_settings, running_server

pytestmark = pytest.mark.api

LEVEL = "random"


@pytest.fixture
def second(api_settings: Settings, tmp_path: Path) -> Iterator[httpx.Client]:
    """A second instance on the same database, bots on, no think time (as the first); it
    runs them whoever leads (FAIRWAY_BACKGROUND=always), so that both instances try every move."""
    assert api_settings.database_url is not None
    settings = instance_settings(api_settings.database_url, tmp_path)
    settings = msgspec.structs.replace(settings, background="always")
    assert settings.bots
    with running_server(settings) as base, httpx.Client(base_url=base, timeout=20) as client:
        yield client


def bot_moves_counted(client: httpx.Client, sample: str = "fairway_bot_moves_total") -> int:
    """The bot moves this instance appended at `LEVEL` (its metrics), or (`sample`) another
    count of them."""
    text = client.get("/metrics").text
    found = re.search(rf'^{sample}{{level="{LEVEL}"}} ([0-9.e+]+)$', text, re.M)
    return int(float(found.group(1))) if found else 0


def test_two_instances_with_bots_store_each_bot_move_once(
    http: httpx.Client, second: httpx.Client, database_url: str
) -> None:
    """Every version holds one event and every event id is stored once; each bot move is a
    legal move of the state it was decided on (the audit decides each again), so no turn was
    played twice; the game ends."""
    before = bot_moves_counted(http) + bot_moves_counted(second)
    bots = [{"seat": seat, "level": LEVEL} for seat in range(4)]
    body = {"variant": "golf", "seats": 4, "options": {"hands": 2}, "bots": bots}
    opened = http.post("/games", json=body).json()  # bots in every seat: started at once
    game = opened["game_id"]
    assert second.get(f"/games/{game}").json()["started"] is True
    deadline = time.monotonic() + 120
    while http.get(f"/games/{game}").json()["status"]["phase"] != "game_over":
        assert time.monotonic() < deadline, "the bots did not finish the game"
        time.sleep(0.05)
    with psycopg.connect(database_url, autocommit=True) as conn:
        rows = conn.execute(
            "SELECT stream_version, event_id, metadata::text, recorded_at FROM events "
            "WHERE stream_id = %s ORDER BY stream_version",
            (f"game:{game}",),
        ).fetchall()
    assert [row[0] for row in rows] == list(range(1, len(rows) + 1))
    assert len({row[1] for row in rows}) == len(rows), "no event stored twice"
    moves = {row[3] for row in rows if json.loads(row[2]).get("bot") == LEVEL}  # one per append
    assert moves
    assert all(json.loads(row[2]).get("seat") in range(4) for row in rows if row[3] in moves)
    # Both instances decided the moves: each counts those whose append returned, its own or
    # the same events another stored first (the same ids: the store keeps them once).
    settled = time.monotonic() + 30
    while bot_moves_counted(http) + bot_moves_counted(second) - before < len(moves):
        assert time.monotonic() < settled
        time.sleep(0.05)
    for client in (http, second):  # each move counted comes with how long its bot took
        thought = bot_moves_counted(client, "fairway_bot_thinking_seconds_count")
        assert thought == bot_moves_counted(client)
    assert http.get(f"/games/{game}/audit").json()["ok"] is True
