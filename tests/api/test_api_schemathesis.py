"""schemathesis against the committed OpenAPI document and a live server: no 5xx, and every
response conforms to the document."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

pytestmark = [pytest.mark.api, pytest.mark.slow]

ROOT = Path(__file__).resolve().parents[2]
SCHEMATHESIS = Path(sys.executable).with_name("schemathesis")


def test_schemathesis_finds_no_server_error_and_no_schema_violation(
    api_base: str, tmp_path: Path
) -> None:
    result = subprocess.run(
        [
            str(SCHEMATHESIS),
            "run",
            str(ROOT / "openapi" / "openapi.json"),
            "--url",
            api_base,
            "--checks",
            "not_a_server_error,status_code_conformance,"
            "content_type_conformance,response_schema_conformance",
            "--max-examples",
            "25",
            "--seed",
            "20261120",
            "--phases",
            "examples,coverage,fuzzing",
            "--report-dir",
            str(tmp_path),
        ],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=900,
    )
    assert result.returncode == 0, result.stdout[-6000:] + result.stderr[-2000:]
