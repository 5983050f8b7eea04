"""`fairway audit` and `fairway verify`, the real command in a subprocess.

Given a game stored through the real stores (PostgreSQL and the embedded file), `fairway
audit GAME_ID` reports that everything holds and exits 0, and names the version of a row
altered in PostgreSQL and exits 1. Given its export, `fairway verify FILE` holds with no
database and no server, and an altered export fails naming the event and field."""

from __future__ import annotations

import asyncio
import json
import subprocess
import uuid
from pathlib import Path

import msgspec
import psycopg
import pytest

from events.store import NewEvent, open_store
from service.audit.export import export_game, ndjson_lines
from service.contract.export import GameExport
from service.contract.receipts import ReceiptKey, b64url, sign
from tests.e2e.test_cli import FAIRWAY, ROOT
from tests.support.histories import played

pytestmark = pytest.mark.e2e


def fairway(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [*FAIRWAY, *args], cwd=ROOT, capture_output=True, text=True, timeout=300, env={}
    )


def store_game(database_url: str | None, data_dir: Path) -> tuple[str, list[bytes]]:
    """A finished golf game appended as the service appends it; its id and chain hashes."""
    game_id = uuid.uuid4().hex[:16]
    stored, _ = played("golf", 2, seed=21)

    async def append() -> list[bytes]:
        store = await open_store(database_url, data_dir)
        try:
            new = [NewEvent(uuid.uuid4(), event, metadata) for event, metadata in stored]
            result = await store.append(f"game:{game_id}", 0, new)
            return list(result.hashes)
        finally:
            await store.close()

    return game_id, asyncio.run(append())


def export_of(database_url: str | None, data_dir: Path, game_id: str) -> bytes:
    async def read() -> bytes:
        store = await open_store(database_url, data_dir)
        try:
            rows = await store.read_stored(f"game:{game_id}")
        finally:
            await store.close()
        return msgspec.json.encode(export_game(game_id, rows))

    return asyncio.run(read())


def test_fairway_audit_from_postgresql_and_a_row_altered_there(
    database_url: str, tmp_path: Path
) -> None:
    game_id, _ = store_game(database_url, tmp_path)
    held = fairway("audit", game_id, "--url", database_url)
    assert held.returncode == 0, held.stdout + held.stderr
    assert held.stdout.splitlines()[-1] == "everything holds"
    assert "ok      legality" in held.stdout

    with psycopg.connect(database_url, autocommit=True) as conn:
        (version, data) = conn.execute(
            "SELECT stream_version, data::text FROM events WHERE stream_id = %s"
            " AND type = 'card.turned' ORDER BY stream_version LIMIT 1",
            (f"game:{game_id}",),
        ).fetchone() or (0, "")
        changed = json.loads(data)
        changed["card"] = "2C" if changed["card"] != "2C" else "3C"
        conn.execute("SET session_replication_role = replica")
        conn.execute(
            "UPDATE events SET data = %s WHERE stream_id = %s AND stream_version = %s",
            (json.dumps(changed, separators=(",", ":")), f"game:{game_id}", version),
        )
    broken = fairway("audit", game_id, "--url", database_url, "--json")
    assert broken.returncode == 1
    report = json.loads(broken.stdout)
    assert report["chain"]["failure"]["version"] == version
    assert {(f["version"], f["field"]) for f in report["failures"]} >= {(version, "data.card")}
    text = fairway("audit", game_id, "--url", database_url).stdout
    assert f"first failure (chain): version {version}:" in text


def test_fairway_audit_from_the_embedded_store_and_its_refusals(tmp_path: Path) -> None:
    game_id, hashes = store_game(None, tmp_path)
    held = fairway("audit", game_id, "--data-dir", str(tmp_path))
    assert held.returncode == 0, held.stdout + held.stderr
    key = ReceiptKey.generate()
    receipts = tmp_path / "receipts.json"
    receipts.write_bytes(
        msgspec.json.encode(
            [sign(key, game_id, 7, hashes[6]), sign(key, game_id, 7, hashes[7])]
        )  # the second signs another event's hash at version 7: a rewrite
    )
    checked = fairway(
        "audit", game_id, "--data-dir", str(tmp_path), "--receipts", str(receipts),
        "--key", key.public_key.hex(),
    )  # fmt: skip
    assert checked.returncode == 1
    assert (
        "ok      receipt for version 7: the stored history holds the signed hash" in checked.stdout
    )
    assert "FAILED  receipt for version 7: hash differs" in checked.stdout
    missing = fairway("audit", "0000000000000000", "--data-dir", str(tmp_path))
    assert missing.returncode == 2
    assert "no game 0000000000000000" in missing.stderr
    bad = fairway("audit", "not-an-id", "--data-dir", str(tmp_path))
    assert bad.returncode == 2
    assert "is not a game id" in bad.stderr


def test_fairway_verify_holds_offline_and_names_an_altered_field(tmp_path: Path) -> None:
    game_id, _ = store_game(None, tmp_path / "store")
    document = export_of(None, tmp_path / "store", game_id)
    path = tmp_path / "game.json"
    path.write_bytes(document)
    held = fairway("verify", str(path))
    assert held.returncode == 0, held.stdout + held.stderr
    assert held.stdout.splitlines()[-1] == "everything holds"
    for check in ("chain", "commitments", "deck", "legality", "scores", "winners", "export"):
        assert f"ok      {check} (" in held.stdout

    ndjson = tmp_path / "game.ndjson"
    ndjson.write_bytes(b"".join(ndjson_lines(msgspec.json.decode(document, type=GameExport))))
    assert fairway("verify", str(ndjson)).returncode == 0

    doc = json.loads(document)
    event = next(e for e in doc["events"] if e["type"] == "card.turned")
    data = json.loads(event["data"])
    found = "2C" if data["card"] != "2C" else "3C"
    expected, data["card"] = data["card"], found
    event["data"] = json.dumps(data, separators=(",", ":"))
    path.write_text(json.dumps(doc))
    failed = fairway("verify", str(path))
    assert failed.returncode == 1
    assert (
        f"version {event['version']}: data.card differs from the re-decided event "
        f"(expected {expected}, found {found})"
    ) in failed.stdout

    path.write_text("{}")
    assert fairway("verify", str(path)).returncode == 2
    assert fairway("verify", str(tmp_path / "absent.json")).returncode == 2


def receipt_key(leading_dash: bool) -> ReceiptKey:
    """A key whose public half in base64url begins with `-` (about one in 64), or not."""
    while True:
        key = ReceiptKey.generate()
        if b64url(key.public_key).startswith("-") == leading_dash:
            return key


@pytest.mark.parametrize("leading_dash", [False, True], ids=["key", "key-starting-with-dash"])
def test_fairway_verify_reports_a_receipt_the_export_contradicts(
    tmp_path: Path, leading_dash: bool
) -> None:
    game_id, hashes = store_game(None, tmp_path / "store")
    path = tmp_path / "game.json"
    path.write_bytes(export_of(None, tmp_path / "store", game_id))
    key = receipt_key(leading_dash)
    receipts = [sign(key, game_id, v, hashes[v - 1]) for v in (10, len(hashes))]
    held = tmp_path / "receipts.json"
    held.write_bytes(msgspec.json.encode(receipts))
    public = b64url(key.public_key)
    ok = fairway("verify", str(path), "--receipts", str(held), "--key", public)
    assert ok.returncode == 0, ok.stdout + ok.stderr
    assert "ok      receipts (2 checked)" in ok.stdout

    doc = json.loads(path.read_bytes())
    doc["events"] = doc["events"][:-1]  # a cut tail, header and all made to agree
    doc["event_count"] -= 1
    doc["head_hash"] = doc["events"][-1]["hash"]
    path.write_text(json.dumps(doc))
    cut = fairway("verify", str(path), "--receipts", str(held), "--key", public)
    assert cut.returncode == 1
    assert f"receipt for version {len(hashes)}: version missing" in cut.stdout
    no_key = fairway("verify", str(path), "--receipts", str(held))
    assert no_key.returncode == 2
    assert "--key" in no_key.stderr
