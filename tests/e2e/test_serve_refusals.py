"""Settings that are each valid but that `fairway serve` cannot honour together stop it
before it starts: one line on stderr naming what to change, exit 2, nothing served."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from tests.api.server import free_port
from tests.e2e.test_cli import run

pytestmark = pytest.mark.e2e


def environment(**extra: str) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if k not in ("DATABASE_URL", "REDIS_URL")}
    return env | extra


def test_several_workers_on_the_embedded_store_are_refused(tmp_path: Path) -> None:
    by_variable = run(
        "serve",
        "--port",
        str(free_port()),
        env=environment(FAIRWAY_DATA_DIR=str(tmp_path), FAIRWAY_WORKERS="3"),
    )
    assert by_variable.returncode == 2
    assert by_variable.stderr == (
        "fairway serve: FAIRWAY_WORKERS is 3, but the embedded store is one process's: set "
        "DATABASE_URL (PostgreSQL) for several workers, or run one\n"
    )
    assert "serving on" not in by_variable.stdout
    by_flag = run(
        "serve",
        "--port",
        str(free_port()),
        "--workers",
        "2",
        env=environment(FAIRWAY_DATA_DIR=str(tmp_path)),
    )
    assert by_flag.returncode == 2
    assert by_flag.stderr.startswith("fairway serve: --workers is 2, but the embedded store")
    assert by_flag.stderr.count("\n") == 1


def test_a_data_directory_that_cannot_be_made_is_refused(tmp_path: Path) -> None:
    blocker = tmp_path / "a-file"
    blocker.write_text("not a directory")
    where = blocker / "data"
    embedded = run(
        "serve", "--port", str(free_port()), env=environment(FAIRWAY_DATA_DIR=str(where))
    )
    assert embedded.returncode == 2
    assert embedded.stderr == (
        "fairway serve: FAIRWAY_DATA_DIR cannot be made (Not a directory), and the embedded "
        f"store keeps its file there: {str(where)!r}\n"
    )
    # On PostgreSQL without a receipt key, the key is kept there: refused the same way.
    keyless = run(
        "serve",
        "--port",
        str(free_port()),
        env=environment(
            FAIRWAY_DATA_DIR=str(where), DATABASE_URL="postgresql://127.0.0.1:1/nowhere"
        ),
    )
    assert keyless.returncode == 2
    assert "the receipt key is kept there unless FAIRWAY_RECEIPT_KEY is set" in keyless.stderr
    assert keyless.stderr.count("\n") == 1
