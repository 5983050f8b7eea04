"""`fairway serve` keeps one receipt key across restarts, and refuses a bad configured one."""

from __future__ import annotations

import os
import stat
from pathlib import Path

import httpx
import msgspec
import pytest

from service.contract.receipts import KEY_FILE_NAME, Receipt, from_b64url, verify_receipt
from tests.api.server import free_port
from tests.e2e.test_cli import run, serving

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


def test_a_bad_configured_key_stops_serve_with_one_line_naming_it() -> None:
    env = {**os.environ, "FAIRWAY_RECEIPT_KEY": "c2hvcnQ="}
    result = run("serve", "--port", str(free_port()), env=env)
    assert result.returncode == 2
    assert result.stderr.strip() == (
        "fairway serve: FAIRWAY_RECEIPT_KEY must be base64 of a 32-byte Ed25519 seed, "
        "not of 5 bytes"
    )
