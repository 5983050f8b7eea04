"""`fairway serve` keeps one receipt key across restarts, and refuses a bad configured one;
`fairway audit` accepts the receipts of every key the store has registered: the instances'
on one database, each with a key of its own, and the key of the embedded store's data
directory."""

from __future__ import annotations

import os
import stat
from pathlib import Path

import httpx
import msgspec
import pytest

from events.migrate import migrate
from service.contract.receipts import (
    KEY_FILE_NAME,
    Receipt,
    ReceiptKey,
    from_b64url,
    sign,
    verify_receipt,
)
from tests.api.players import Table, open_table
from tests.api.server import free_port, instance_settings, running_server
from tests.e2e.test_cli import run, serving
from tests.e2e.test_cli_audit import fairway
from tests.support.services import throwaway_database

pytestmark = pytest.mark.e2e


def served_key(http: httpx.Client) -> bytes:
    return from_b64url(http.get("/.well-known/fairway-receipt-key").json()["public_key"])


def test_the_key_made_in_the_data_directory_outlives_a_restart(tmp_path: Path) -> None:
    with serving(tmp_path) as served, httpx.Client(base_url=served.base) as http:
        first_key = served_key(http)
        created = http.post("/games", json={"variant": "golf", "seats": 2}).json()
        receipt = msgspec.convert(created["receipt"], Receipt)
    key_file = tmp_path / KEY_FILE_NAME
    assert stat.S_IMODE(key_file.stat().st_mode) == 0o600

    with serving(tmp_path) as served, httpx.Client(base_url=served.base) as http:
        assert served_key(http) == first_key
        assert verify_receipt(receipt, served_key(http))
        # No warning without a database: one process, one key.
        assert not any("receipt_key_from_data_dir" in line for line in served.stderr_lines())

    # The embedded store registered its key too: no --key needed to check its receipts.
    held = tmp_path / "held.json"
    held.write_bytes(msgspec.json.encode([receipt]))
    audited = fairway(
        "audit", receipt.game_id, "--data-dir", str(tmp_path), "--receipts", str(held)
    )
    assert audited.returncode == 0, audited.stdout + audited.stderr
    assert "ok      receipts (1 checked)" in audited.stdout


def test_a_bad_configured_key_stops_serve_with_one_line_naming_it() -> None:
    env = {**os.environ, "FAIRWAY_RECEIPT_KEY": "c2hvcnQ="}
    result = run("serve", "--port", str(free_port()), env=env)
    assert result.returncode == 2
    assert result.stderr.strip() == (
        "fairway serve: FAIRWAY_RECEIPT_KEY must be base64 of a 32-byte Ed25519 seed, "
        "not of 5 bytes"
    )


def act(table: Table) -> dict[str, object]:
    seat = table.public()["status"]["to_act"][0]
    answer = table.act(seat, table.me(seat)["legal_actions"][0])
    assert answer.status_code == 200, answer.text
    return answer.json()["receipt"]  # type: ignore[no-any-return]


def test_fairway_audit_accepts_every_instances_key_and_no_stranger(
    postgres_server_url: str, tmp_path: Path
) -> None:
    """Two instances on one database, neither with a configured key: `fairway audit --url`
    checks the receipts of both with no --key (the store lists their keys), and still
    rejects a receipt of a key never registered."""
    with throwaway_database(postgres_server_url, "fairway_cli_keys") as url:
        migrate(url)
        with (
            running_server(instance_settings(url, tmp_path / "a")) as a,
            running_server(instance_settings(url, tmp_path / "b")) as b,
            httpx.Client(base_url=a, timeout=20) as one,
            httpx.Client(base_url=b, timeout=20) as two,
        ):
            table = open_table(one, "golf", 2, {"hands": 1})
            receipts = [act(table), act(Table(two, table.game_id, table.creator, table.tokens))]
        assert receipts[0]["key_id"] != receipts[1]["key_id"]
        held = tmp_path / "held.json"
        held.write_bytes(msgspec.json.encode(receipts))
        audited = fairway("audit", table.game_id, "--url", url, "--receipts", str(held))
        assert audited.returncode == 0, audited.stdout + audited.stderr
        assert "ok      receipts (2 checked)" in audited.stdout

        genuine = msgspec.convert(receipts[1], Receipt)
        stranger = ReceiptKey.generate()
        forged = sign(stranger, table.game_id, genuine.version, bytes.fromhex(genuine.hash))
        held.write_bytes(msgspec.json.encode([forged]))
        refused = fairway("audit", table.game_id, "--url", url, "--receipts", str(held))
        assert refused.returncode == 1, refused.stdout + refused.stderr
        assert (
            f"FAILED  receipt for version {genuine.version}: signed by key {stranger.key_id}, "
            "which is not a known key"
        ) in refused.stdout
