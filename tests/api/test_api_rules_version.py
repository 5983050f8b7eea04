"""The rules version over real HTTP: a game the API creates names its variant's version in
`game.created` and its export; the audit of a stored game whose version this server does not
implement is refused by name (`422 unknown_rules_version`), GET and POST alike, and one it
implements is judged."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path
from typing import Any

import httpx
import pytest

from tests.api.players import open_table
from tests.support.versioned import store_versioned

pytestmark = pytest.mark.api


def test_a_new_game_names_its_rules_version(http: httpx.Client, stored: Any) -> None:
    table = open_table(http, "basketball", 2)
    first = stored(table.game_id)[0]
    assert first[2] == "game.created"
    assert json.loads(first[3])["rules_version"] == "basketball/1"


def test_the_audit_refuses_a_version_it_does_not_implement(
    http: httpx.Client, database_url: str, tmp_path: Path
) -> None:
    game_id = asyncio.run(store_versioned(database_url, tmp_path, "golf/99"))
    for answer in (
        http.get(f"/games/{game_id}/audit"),
        http.post(f"/games/{game_id}/audit", json={"receipts": []}),
    ):
        assert answer.status_code == 422, answer.text
        problem = answer.json()
        assert problem["code"] == "unknown_rules_version"
        assert game_id in problem["detail"]
        assert "'golf/99'" in problem["detail"]
    export = http.get(f"/games/{game_id}/export")
    assert export.status_code == 200
    assert export.json()["rules_version"] == "golf/99"


def test_the_audit_judges_a_version_it_implements(
    http: httpx.Client, database_url: str, tmp_path: Path
) -> None:
    game_id = asyncio.run(store_versioned(database_url, tmp_path, "golf/1"))
    answer = http.get(f"/games/{game_id}/audit")
    assert answer.status_code == 200, answer.text
    assert answer.json()["ok"] is True
    assert http.get(f"/games/{game_id}/export").json()["rules_version"] == "golf/1"
