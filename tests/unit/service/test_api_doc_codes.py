"""docs/API.md's error table matches the code: every problem code the service can send is
listed under the status it is sent with, and the table lists no code that does not exist."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from service.contract.problems import ALL_CODES, SERVICE_CODES
from service.http.problems import _CONFLICTS, _MISSING

pytestmark = pytest.mark.unit

API_MD = Path(__file__).resolve().parents[3] / "docs" / "API.md"


def table() -> dict[str, set[int]]:
    """Each code in the error table, with the statuses it is listed under."""
    text = API_MD.read_text()
    rows = text[text.index("| status | codes |") :].split("\n\n")[0].splitlines()[2:]
    listed: dict[str, set[int]] = {}
    for row in rows:
        status, codes = row.strip("|").split("|", 1)
        for code in re.findall(r"`([a-z_]+)`", codes):
            listed.setdefault(code, set()).add(int(status))
    return listed


def test_every_problem_code_is_in_the_table_and_every_listed_code_exists() -> None:
    listed = table()
    assert set(listed) == set(ALL_CODES)


@pytest.mark.parametrize("code", sorted(set(ALL_CODES) - set(SERVICE_CODES)))
def test_a_rule_violation_is_listed_under_the_status_it_is_sent_with(code: str) -> None:
    expected = 409 if code in _CONFLICTS else 404 if code in _MISSING else 422
    assert expected in table()[code]
