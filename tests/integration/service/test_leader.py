"""The installation's lead (service/ops/leader.py, events/store/postgres_lead.py): of several
processes on one database, one runs the feed's consumers; when it stops or loses its
connection another takes over; the embedded store's one process always leads."""

from __future__ import annotations

import asyncio
from collections.abc import Iterator
from pathlib import Path

import psycopg
import pytest

from events.migrate import migrate
from events.store import EmbeddedStore, PostgresStore
from events.store.postgres_lead import LOCK_CLASS, lock_key
from service.ops.leader import Leader
from tests.support.services import throwaway_database

pytestmark = pytest.mark.integration

RETRY = 0.05
WAIT = 30.0
"""Generous seconds for a hand-over; nothing here times it."""


class Recorder:
    """A consumer that says whether it runs."""

    def __init__(self) -> None:
        self.running = asyncio.Event()
        self.stopped = asyncio.Event()
        self.starts = 0

    def start(self) -> None:
        self.starts += 1
        self.stopped.clear()
        self.running.set()

    async def stop(self) -> None:
        self.running.clear()
        self.stopped.set()


@pytest.fixture
def lead_db(postgres_server_url: str) -> Iterator[str]:
    with throwaway_database(postgres_server_url, "fairway_lead") as url:
        migrate(url)
        yield url


async def leaders(url: str, count: int) -> tuple[list[PostgresStore], list[Recorder], list[Leader]]:
    stores = [await PostgresStore.open(url, poll_interval=0.05) for _ in range(count)]
    recorders = [Recorder() for _ in range(count)]
    made = [Leader(s, [r], "leader", retry=RETRY) for s, r in zip(stores, recorders, strict=True)]
    return stores, recorders, made


async def one_runs(recorders: list[Recorder]) -> Recorder:
    """The one recorder that runs, once one does; and a few retries later still only it."""
    async with asyncio.timeout(WAIT):
        while not any(r.running.is_set() for r in recorders):
            await asyncio.sleep(RETRY)
    await asyncio.sleep(RETRY * 10)  # the others have each tried again meanwhile
    running = [r for r in recorders if r.running.is_set()]
    assert len(running) == 1, "exactly one process runs the consumers"
    return running[0]


def holder_pid(url: str) -> int:
    """The backend holding this database's lead (every database on the server has its own)."""
    with psycopg.connect(url, autocommit=True) as conn:
        row = conn.execute(
            "SELECT pid FROM pg_locks WHERE locktype = 'advisory' AND granted"
            " AND classid = %s AND objid = %s AND objsubid = 2 AND database ="
            " (SELECT oid FROM pg_database WHERE datname = current_database())",
            (LOCK_CLASS, lock_key("background")),
        ).fetchone()
    assert row is not None, "someone holds the lead"
    return int(row[0])


async def test_one_of_three_leads_and_another_takes_over_when_it_stops(lead_db: str) -> None:
    stores, recorders, made = await leaders(lead_db, 3)
    try:
        for leader in made:
            leader.start()
        first = await one_runs(recorders)
        index = recorders.index(first)
        assert made[index].leading
        assert sum(leader.leading for leader in made) == 1
        await made[index].stop()
        assert first.stopped.is_set()
        rest = recorders[:index] + recorders[index + 1 :]
        second = await one_runs(rest)
        assert second is not first
        assert not first.running.is_set()
    finally:
        for leader in made:
            await leader.stop()
        for store in stores:
            await store.close()


async def test_a_leader_that_loses_its_connection_stops_until_it_leads_again(
    lead_db: str,
) -> None:
    stores, recorders, made = await leaders(lead_db, 2)
    try:
        for leader in made:
            leader.start()
        first = await one_runs(recorders)
        with psycopg.connect(lead_db, autocommit=True) as conn:
            conn.execute("SELECT pg_terminate_backend(%s)", (holder_pid(lead_db),))
        async with asyncio.timeout(WAIT):
            await first.stopped.wait()  # its connection is gone: it stops its consumers
        await one_runs(recorders)  # and one of the two leads again
        holder_pid(lead_db)
    finally:
        for leader in made:
            await leader.stop()
        for store in stores:
            await store.close()


async def test_the_embedded_store_always_leads(tmp_path: Path) -> None:
    store = await EmbeddedStore.open(tmp_path, poll_interval=0.05)
    recorder = Recorder()
    leader = Leader(store, [recorder], "leader", retry=RETRY)
    try:
        leader.start()
        async with asyncio.timeout(WAIT):
            await recorder.running.wait()
    finally:
        await leader.stop()
        await store.close()
    assert recorder.stopped.is_set()


@pytest.mark.parametrize("mode", ["always", "never"])
async def test_always_runs_them_in_every_process_and_never_in_none(lead_db: str, mode: str) -> None:
    stores, recorders, _ = await leaders(lead_db, 2)
    made = [Leader(s, [r], mode, retry=RETRY) for s, r in zip(stores, recorders, strict=True)]
    try:
        for leader in made:
            leader.start()
        await asyncio.sleep(RETRY * 10)
        assert [r.running.is_set() for r in recorders] == [mode == "always"] * 2
    finally:
        for leader in made:
            await leader.stop()
        for store in stores:
            await store.close()
