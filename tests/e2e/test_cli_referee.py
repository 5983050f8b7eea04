"""The referee in real processes: `fairway serve` plays a clocked game's overdue turn (one
that ran out while no referee ran, found by the start-up scan), shows it in /metrics, and
`fairway referee` on its own plays out a table whose players withdrew, and, started before
its database exists, waits for it."""

from __future__ import annotations

import asyncio
import os
import signal
import subprocess
import sys
import time
from collections.abc import Iterator
from datetime import datetime
from pathlib import Path

import httpx
import pytest
from psycopg import conninfo

from events.migrate import migrate
from events.schema.common import GameEnded, GameOptions
from events.schema.lobby import TurnPlayedFor
from events.store import PostgresStore
from service.ops.metrics import Metrics
from service.play.games import GameService, stream_id
from tests.e2e.test_cli import ROOT, serving
from tests.support.children import dies_with_us
from tests.support.services import database_made_later, throwaway_database

pytestmark = pytest.mark.e2e

WAIT = 60.0


def played_for(http: httpx.Client, game_id: str) -> list[dict[str, object]]:
    events = http.get(f"/games/{game_id}/events").json()["events"]
    return [e["event"] for e in events if e["event"]["type"] == "turn.played_for"]


def test_serve_plays_a_turn_that_ran_out_while_no_referee_ran(tmp_path: Path) -> None:
    with (
        serving(tmp_path, env={"FAIRWAY_REFEREE": "off"}) as served,
        httpx.Client(base_url=served.base) as http,
    ):
        created = http.post(
            "/games", json={"variant": "golf", "seats": 2, "options": {"turn_seconds": 5}}
        ).json()
        game = created["game_id"]
        for name in ("ann", "bob"):
            http.post(f"/games/{game}/seats", json={"name": name}).raise_for_status()
        http.post(
            f"/games/{game}/start", headers={"Authorization": f"Bearer {created['creator_token']}"}
        ).raise_for_status()
        summary = http.get(f"/games/{game}").json()
        deadline = datetime.fromisoformat(summary["turn_deadline"])
        time.sleep(max(0.0, (deadline - datetime.now(deadline.tzinfo)).total_seconds()) + 0.5)
        assert played_for(http, game) == [], "no referee runs here"

    with (
        serving(tmp_path, env={"FAIRWAY_REFEREE_TICK": "0.1"}) as served,
        httpx.Client(base_url=served.base) as http,
    ):
        limit = time.monotonic() + WAIT
        while not played_for(http, game):
            assert time.monotonic() < limit, "the overdue turn was not played"
            time.sleep(0.05)
        first = played_for(http, game)[0]
        assert first["reason"] == "timeout"
        metrics = http.get("/metrics").text
        assert 'fairway_turns_played_for_total{reason="timeout"}' in metrics


@pytest.fixture
def own_database(postgres_server_url: str) -> Iterator[str]:
    """A database of the test's own: the session's holds other tests' streams, and the API
    server's referee, which would play this table out first."""
    with throwaway_database(postgres_server_url, "fairway_refcli") as url:
        migrate(url)
        yield url


async def test_fairway_referee_plays_out_a_table_whose_players_withdrew(
    own_database: str,
) -> None:
    database_url = own_database
    store = await PostgresStore.open(database_url)
    try:
        games = GameService(store, Metrics())
        record, creator = await games.create("golf", 2, GameOptions(hands=1), "withdrawn")
        for name in ("ann", "bob"):
            await games.claim(record.game_id, None, name)
        await games.start(record.game_id, creator)
        for seat in range(2):
            await games.resign(record.game_id, None, seat, "withdrawn")
        env = {
            **os.environ,
            "DATABASE_URL": database_url,
            "FAIRWAY_LOG_FORMAT": "json",
            "FAIRWAY_REFEREE_TICK": "0.1",
        }
        process = subprocess.Popen(
            [sys.executable, "-m", "service.cli", "referee"],
            cwd=ROOT,
            env=env,
            preexec_fn=dies_with_us(),
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        try:
            async with asyncio.timeout(WAIT):
                while True:
                    events = await store.read_stream(stream_id(record.game_id))
                    if any(isinstance(e.data, GameEnded) for e in events):
                        break
                    assert process.poll() is None, process.communicate()
                    await asyncio.sleep(0.1)
        finally:
            process.send_signal(signal.SIGTERM)
            out, err = process.communicate(timeout=30)
        assert process.returncode == 0, err
        turns = [e.data for e in events if isinstance(e.data, TurnPlayedFor)]
        assert turns
        assert {t.reason for t in turns} == {"withdrawn"}
        assert "referee_stopped" in out + err
    finally:
        await store.close()


def test_fairway_referee_started_before_its_database_exists_waits_for_it(
    postgres_server_url: str,
) -> None:
    """The consumers' processes (`fairway referee`, `fairway bots`) wait for a store they
    cannot reach yet, saying why, and start once it is there (they exited with status 1)."""
    with database_made_later(postgres_server_url, "fairway_late") as (database_url, make):
        env = {**os.environ, "DATABASE_URL": database_url, "FAIRWAY_LOG_FORMAT": "json"}
        process = subprocess.Popen(
            [sys.executable, "-m", "service.cli", "referee"],
            cwd=ROOT,
            env=env,
            preexec_fn=dies_with_us(),
            stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT,
            text=True,
        )
        said: list[str] = []

        def read_until(word: str) -> None:
            assert process.stdout is not None
            for line in process.stdout:
                said.append(line)
                if word in line:
                    return

        try:
            read_until("referee_store_unreachable")
            assert process.poll() is None, "".join(said)
            assert conninfo.conninfo_to_dict(database_url)["dbname"] in said[-1]  # its reason
            make()
            migrate(database_url)
            read_until("referee_started")
            assert process.poll() is None, "".join(said)
            assert "referee_started" in said[-1]
        finally:
            process.send_signal(signal.SIGTERM)
            process.communicate(timeout=30)
