"""`fairway bots` in a process of its own: it plays out a table of bots opened and started
while no bot runner ran (found by its start-up scan), and stops cleanly on SIGTERM."""

from __future__ import annotations

import asyncio
import os
import signal
import subprocess
import sys
from collections.abc import Iterator

import pytest

from events.migrate import migrate
from events.schema.common import GameEnded, GameOptions
from events.store import PostgresStore
from service.ops.metrics import Metrics
from service.play.games import GameService, stream_id
from tests.e2e.test_cli import ROOT
from tests.support.children import dies_with_us
from tests.support.services import throwaway_database

pytestmark = pytest.mark.e2e

WAIT = 60.0


@pytest.fixture
def own_database(postgres_server_url: str) -> Iterator[str]:
    """A database of the test's own: no other bot runner sees its table."""
    with throwaway_database(postgres_server_url, "fairway_botcli") as url:
        migrate(url)
        yield url


async def test_fairway_bots_plays_out_a_table_of_bots(own_database: str) -> None:
    store = await PostgresStore.open(own_database)
    try:
        games = GameService(store, Metrics())
        bots = [(0, "greedy", None), (1, "random", "Rando")]
        record, _ = await games.create("golf", 2, GameOptions(hands=1), "bots", None, bots)
        assert record.started  # bots in every seat: started as it is opened
        env = {
            **os.environ,
            "DATABASE_URL": own_database,
            "FAIRWAY_LOG_FORMAT": "json",
            "FAIRWAY_BOT_THINK": "0",
        }
        process = subprocess.Popen(
            [sys.executable, "-m", "service.cli", "bots"],
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
        levels = {
            e.metadata.get("seat"): e.metadata.get("bot") for e in events if "bot" in e.metadata
        }
        assert levels == {0: "greedy", 1: "random"}
        assert '"bots_started"' in out + err
        assert '"bots_stopped"' in out + err
    finally:
        await store.close()
