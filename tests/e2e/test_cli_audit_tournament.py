"""`fairway audit-tournament`, the real command in a subprocess: an honest duplicate
tournament stored in PostgreSQL holds and exits 0; a round's revealed seed altered in the
database is named (round, check) and exits 1; an unknown or malformed id exits 2."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path

import psycopg
import pytest

from events.store import PostgresStore
from service.ops.metrics import Metrics
from service.play.games import GameService
from tests.e2e.test_cli_audit import fairway
from tests.support.duplicate_rounds import run_tournament

pytestmark = pytest.mark.e2e


def stored_tournament(database_url: str) -> str:
    async def run() -> str:
        store = await PostgresStore.open(database_url)
        try:
            return (await run_tournament(GameService(store, Metrics()))).tournament_id
        finally:
            await store.close()

    return asyncio.run(run())


def test_fairway_audit_tournament_holds_and_names_an_altered_round_seed(
    database_url: str, tmp_path: Path
) -> None:
    tournament_id = stored_tournament(database_url)
    held = fairway("audit-tournament", tournament_id, "--url", database_url)
    assert held.returncode == 0, held.stdout + held.stderr
    assert held.stdout.splitlines()[-1] == "everything holds"
    assert "ok      decks (8 checked)" in held.stdout

    stream = f"tournament:{tournament_id}"
    with psycopg.connect(database_url, autocommit=True) as conn:
        (version, data) = conn.execute(
            "SELECT stream_version, data::text FROM events WHERE stream_id = %s"
            " AND type = 'round.closed' ORDER BY stream_version DESC LIMIT 1",
            (stream,),
        ).fetchone() or (0, "")
        changed = json.loads(data)
        changed["server_seed"] = "ab" * 32
        conn.execute("SET session_replication_role = replica")
        conn.execute(
            "UPDATE events SET data = %s WHERE stream_id = %s AND stream_version = %s",
            (json.dumps(changed, separators=(",", ":")), stream, version),
        )
    broken = fairway("audit-tournament", tournament_id, "--url", database_url, "--json")
    assert broken.returncode == 1, broken.stdout + broken.stderr
    report = json.loads(broken.stdout)
    found = {(f["check"], f["round"], f["field"]) for f in report["failures"]}
    assert ("round_seeds", 2, "server_seed") in found
    assert any(f["check"] == "chain" for f in report["failures"])  # the row no longer links

    missing = fairway("audit-tournament", "0000000000000000", "--data-dir", str(tmp_path))
    assert missing.returncode == 2
    assert "no tournament 0000000000000000" in missing.stderr
    bad = fairway("audit-tournament", "nope", "--data-dir", str(tmp_path))
    assert bad.returncode == 2
    assert "is not a tournament id" in bad.stderr
