"""`fairway verify` and `fairway audit` judge the rules versions they implement and refuse the
others by name: the real command in a subprocess, on games in the embedded store and their
exports (docs/SHUFFLE.md, "The rules version")."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path

import pytest

from tests.e2e.test_cli_audit import export_of, fairway
from tests.support.versioned import store_versioned

pytestmark = pytest.mark.e2e


def exported(tmp_path: Path, version: str) -> tuple[str, Path]:
    data_dir = tmp_path / "store"
    game_id = asyncio.run(store_versioned(None, data_dir, version))
    path = tmp_path / f"{game_id}.json"
    path.write_bytes(export_of(None, data_dir, game_id))
    return game_id, path


@pytest.mark.parametrize("version", ["golf/1", ""])
def test_a_version_it_implements_is_judged(tmp_path: Path, version: str) -> None:
    _, path = exported(tmp_path, version)
    assert json.loads(path.read_text())["rules_version"] == version
    held = fairway("verify", str(path))
    assert held.returncode == 0, held.stdout + held.stderr
    assert held.stdout.splitlines()[-1] == "everything holds"


def test_an_export_whose_version_is_unknown_is_refused_by_name(tmp_path: Path) -> None:
    game_id, path = exported(tmp_path, "golf/99")
    assert json.loads(path.read_text())["rules_version"] == "golf/99"
    refused = fairway("verify", str(path))
    assert refused.returncode == 2, refused.stdout + refused.stderr
    assert refused.stdout == ""
    assert f"fairway verify: refused: game {game_id}" in refused.stderr
    assert "rules version 'golf/99'" in refused.stderr
    assert "does not implement (it implements" in refused.stderr
    audited = fairway("audit", game_id, "--data-dir", str(tmp_path / "store"))
    assert audited.returncode == 2, audited.stdout + audited.stderr
    assert "fairway audit: refused:" in audited.stderr
    assert "'golf/99'" in audited.stderr


def test_a_header_naming_an_unknown_version_is_refused_and_another_known_one_fails(
    tmp_path: Path,
) -> None:
    _, path = exported(tmp_path, "golf/1")
    document = json.loads(path.read_text())
    path.write_text(json.dumps(document | {"rules_version": "golf/2"}))
    refused = fairway("verify", str(path))
    assert refused.returncode == 2
    assert "rules version 'golf/2'" in refused.stderr
    path.write_text(json.dumps(document | {"rules_version": ""}))
    failed = fairway("verify", str(path))
    assert failed.returncode == 1, failed.stdout + failed.stderr
    assert "rules_version differs from the events" in failed.stdout
