"""Player names are what clients claim: any shown text up to 40 characters. Each reaches its
own record through the path, percent-encoded."""

from __future__ import annotations

import secrets
import time
from urllib.parse import quote

import httpx
import pytest

from tests.api.test_api_readmodels import named_table

pytestmark = pytest.mark.api


@pytest.mark.parametrize(
    "base", ["Zoë Ångström", "50% off?", "x#y", "   lead", "名前", "a.b", ".."]
)
def test_any_claimable_name_has_its_own_record(http: httpx.Client, base: str) -> None:
    name = f"{base} {secrets.token_hex(3)}"
    named_table(http, "golf", [name, "Bo"], {"hands": 1})
    path = f"/players/{quote(name, safe='')}"
    deadline = time.monotonic() + 60
    response = http.get(path)
    while response.status_code != 200 and time.monotonic() < deadline:
        time.sleep(0.05)
        response = http.get(path)
    assert response.status_code == 200, response.text
    assert response.json()["name"] == name
    assert response.json()["games_played"] == 1
