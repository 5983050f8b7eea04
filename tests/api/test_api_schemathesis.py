"""schemathesis against the committed OpenAPI document and a live server: no 5xx, and every
response conforms to the document (status, content type, body schema).

The generated requests hit a real, started game with a real seat token, so they reach the
rules engine rather than stopping at 404 or 401; and a real tournament that has ended, so
its standings stream, which follows a live tournament for as long as it lasts, sends its
lines and ends."""

from __future__ import annotations

import subprocess
import sys
import time
from pathlib import Path

import httpx
import pytest

from tests.api.players import open_table
from tests.support.tournaments import play_over_http

pytestmark = [pytest.mark.api, pytest.mark.slow]

ROOT = Path(__file__).resolve().parents[2]
SCHEMATHESIS = Path(sys.executable).with_name("schemathesis")
CHECKS = (
    "not_a_server_error,status_code_conformance,content_type_conformance,"
    "response_schema_conformance"
)


@pytest.mark.timeout(1000)
def test_schemathesis_finds_no_server_error_and_no_schema_violation(
    http: httpx.Client, api_base: str, tmp_path: Path
) -> None:
    table = open_table(http, "golf", 2)
    tournament = ended_tournament(http)
    config = tmp_path / "schemathesis.toml"
    config.write_text(
        f'[parameters]\ngame_id = "{table.game_id}"\nvariant = "golf"\n'
        f'tournament_id = "{tournament}"\n'
        # A live game's event stream never ends: read a few events of it, then move on.
        '[[operations]]\ninclude-operation-id = "streamEvents"\nmax-stream-events = 3\n'
    )
    result = subprocess.run(
        [
            str(SCHEMATHESIS), "--config-file", str(config),
            "run", str(ROOT / "openapi" / "openapi.json"),
            "--url", api_base,
            "-H", f"Authorization: Bearer {table.tokens[0]}",
            "--checks", CHECKS,
            "--max-examples", "40",
            "--seed", "20261120",
            "--phases", "examples,coverage,fuzzing",
            "--report-dir", str(tmp_path),
        ],
        cwd=tmp_path, capture_output=True, text=True, timeout=900,
    )  # fmt: skip
    assert result.returncode == 0, result.stdout[-6000:] + result.stderr[-2000:]
    assert "passed" in result.stdout


def ended_tournament(http: httpx.Client) -> str:
    """A one-round Basketball tournament of two players, played to its end."""
    body = {"name": "Fuzzed", "variant": "basketball", "table_size": 2, "rounds": 1}
    opened = http.post("/tournaments", json=body).json()
    tid, organiser = opened["tournament_id"], opened["organiser_token"]
    auth = {"Authorization": f"Bearer {organiser}"}
    tokens = {}
    for name in ("Ann", "Bob"):
        added = http.post(f"/tournaments/{tid}/players", json={"name": name}, headers=auth)
        tokens[name] = added.json()["token"]
    started = http.post(f"/tournaments/{tid}/rounds", headers=auth)
    assert started.status_code == 201, started.text
    play_over_http(http, started.json()["tables"][0]["game_id"], tokens, seed=1)
    deadline = time.monotonic() + 30
    while http.get(f"/tournaments/{tid}").json()["phase"] != "ended":
        assert time.monotonic() < deadline, "the round did not close"
        time.sleep(0.05)
    return str(tid)
