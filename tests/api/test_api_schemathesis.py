"""schemathesis against the committed OpenAPI document and a live server: no 5xx, and every
response conforms to the document (status, content type, body schema).

The generated requests hit a real, started game with a real seat token, so they reach the
rules engine rather than stopping at 404 or 401."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import httpx
import pytest

from tests.api.players import open_table

pytestmark = [pytest.mark.api, pytest.mark.slow]

ROOT = Path(__file__).resolve().parents[2]
SCHEMATHESIS = Path(sys.executable).with_name("schemathesis")
CHECKS = (
    "not_a_server_error,status_code_conformance,content_type_conformance,"
    "response_schema_conformance"
)


def test_schemathesis_finds_no_server_error_and_no_schema_violation(
    http: httpx.Client, api_base: str, tmp_path: Path
) -> None:
    table = open_table(http, "golf", 2)
    config = tmp_path / "schemathesis.toml"
    config.write_text(
        f'[parameters]\ngame_id = "{table.game_id}"\nvariant = "golf"\n'
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
