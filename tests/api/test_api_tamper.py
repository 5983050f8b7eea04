"""A stream whose hash chain does not verify is never served or extended (issue 7, item 8).

Given a game, when a row is forged into its stream behind the service's back (a seat
claimed with a token the forger knows, under a junk hash), then a restarted instance and the
instance that has the game cached both refuse to serve it with a problem, the forged token
seats nobody, the operator sees a log line and a metric, and nothing more is stored."""

from __future__ import annotations

import hashlib
import uuid
from collections.abc import Callable
from pathlib import Path
from typing import Any

import httpx
import msgspec
import psycopg
import pytest

from service.ops.settings import Settings
from tests.api.server import running_server

pytestmark = pytest.mark.api

Stored = Callable[[str], list[tuple[Any, ...]]]
FORGED_TOKEN = "forged-token-known-to-the-forger"


def forge_claim(database_url: str, game_id: str, version: int) -> None:
    """Insert a seat.claimed row as a superuser would, with a hash that is not the chain's."""
    data = (
        '{"type":"seat.claimed","seat":1,"name":"mallory","token_hash":"'
        + hashlib.sha256(FORGED_TOKEN.encode()).hexdigest()
        + '"}'
    )
    with psycopg.connect(database_url, autocommit=True) as conn:
        conn.execute(
            "INSERT INTO events (stream_id, stream_version, event_id, type, schema_version,"
            " data, metadata, hash) VALUES (%s, %s, %s, 'seat.claimed', 1, %s, '{}', %s)",
            (f"game:{game_id}", version, uuid.uuid4(), data, b"\x01" * 32),
        )


def test_a_forged_row_is_never_served_and_its_token_seats_nobody(
    http: httpx.Client, api_settings: Settings, database_url: str, stored: Stored, tmp_path: Path
) -> None:
    created = http.post("/games", json={"variant": "golf", "seats": 2}).json()
    game_id = created["game_id"]
    http.post(f"/games/{game_id}/seats", json={"name": "ann", "seat": 0}).raise_for_status()
    assert http.get(f"/games/{game_id}").status_code == 200  # cached by this instance
    forge_claim(database_url, game_id, version=3)
    rows = stored(game_id)

    restarted = msgspec.structs.replace(api_settings, data_dir=tmp_path)
    with running_server(restarted) as base, httpx.Client(base_url=base, timeout=20) as fresh:
        for client in (fresh, http):
            refused = client.get(f"/games/{game_id}")
            assert refused.status_code == 500
            assert refused.json()["code"] == "history_corrupt"
            assert "version 3" in refused.json()["detail"]
            forged = client.get(
                f"/games/{game_id}/me", headers={"Authorization": f"Bearer {FORGED_TOKEN}"}
            )
            assert forged.status_code == 500
            assert forged.json()["code"] == "history_corrupt"
            claim = client.post(f"/games/{game_id}/seats", json={"name": "bob"})
            assert claim.json()["code"] == "history_corrupt"
            start = client.post(
                f"/games/{game_id}/start",
                headers={"Authorization": f"Bearer {created['creator_token']}"},
            )
            assert start.json()["code"] == "history_corrupt"
        assert "fairway_chain_broken_total" in fresh.get("/metrics").text
    assert stored(game_id) == rows, "nothing was appended after the forged row"
