"""The lean path of POST /games/{id}/actions (service/http/lean.py) answers exactly as the
route through Litestar: the same status, headers in the same order and body bytes, for a
success, an idempotent replay, each kind of refusal and each kind of bad request.

Litestar's route still serves what the lean path does not take: a request whose Content-Type
carries a parameter goes through the router. So each request here is sent twice, once as
`application/json` (the lean path) and once as `application/json; charset=utf-8` (the
router), and the two answers are compared whole, but for the Date and X-Request-Id headers.
Refusals change nothing stored, so the second request meets the game the first did; a
success is compared with its replays by Idempotency-Key, which answer the first answer.
"""

from __future__ import annotations

import http.client
import json
from typing import Any
from urllib.parse import urlsplit

import httpx
import pytest

from tests.api.players import Table, open_table

pytestmark = pytest.mark.api

LEAN = "application/json"
ROUTER = "application/json; charset=utf-8"
Answer = tuple[int, list[tuple[str, str]], bytes]


def post(base: str, path: str, body: bytes, headers: dict[str, str]) -> Answer:
    """The raw answer: status, headers in their order (less Date and X-Request-Id), body."""
    where = urlsplit(base)
    conn = http.client.HTTPConnection(where.hostname or "", where.port, timeout=30)
    try:
        conn.request("POST", path, body=body, headers=headers)
        response = conn.getresponse()
        kept = [
            (name.lower(), value)
            for name, value in response.getheaders()
            if name.lower() not in ("date", "x-request-id")
        ]
        return response.status, kept, response.read()
    finally:
        conn.close()


def both(base: str, path: str, body: bytes, headers: dict[str, str]) -> Answer:
    """The answer of the lean path, after checking that the router's is the same."""
    lean = post(base, path, body, {"Content-Type": LEAN} | headers)
    routed = post(base, path, body, {"Content-Type": ROUTER} | headers)
    assert lean == routed
    return lean


def problem_code(answer: Answer) -> tuple[int, str]:
    status, headers, body = answer
    assert dict(headers)["content-type"] == "application/problem+json"
    return status, json.loads(body)["code"]


@pytest.fixture
def table(http: httpx.Client) -> Table:
    return open_table(http, "golf", 2, {"hands": 1})


def url(table: Table) -> str:
    return f"/games/{table.game_id}/actions"


def encode(action: dict[str, Any]) -> bytes:
    return json.dumps(action).encode()


def test_a_success_and_its_replays_by_either_path_are_the_same_bytes(
    api_base: str, table: Table
) -> None:
    seat = table.public()["status"]["to_act"][0]
    flip = encode({"type": "setup-flip", "row": 0, "col": 0})
    auth = table.auth(seat)
    first = post(
        api_base, url(table), flip, {"Content-Type": LEAN, "Idempotency-Key": "k-1"} | auth
    )
    assert first[0] == 200
    assert [name for name, _ in first[1]] == ["server", "etag", "content-type", "content-length"]
    replays = [
        post(api_base, url(table), flip, {"Content-Type": kind, "Idempotency-Key": "k-1"} | auth)
        for kind in (ROUTER, LEAN)
    ]
    assert replays == [first, first]

    other = encode(table.me(seat)["legal_actions"][0])
    routed = post(
        api_base, url(table), other, {"Content-Type": ROUTER, "Idempotency-Key": "k-2"} | auth
    )
    assert routed[0] == 200
    lean = post(
        api_base, url(table), other, {"Content-Type": LEAN, "Idempotency-Key": "k-2"} | auth
    )
    assert lean == routed
    assert json.loads(lean[2])["version"] == json.loads(first[2])["version"] + 1


def test_each_refusal_is_the_same_problem_by_either_path(
    api_base: str, http: httpx.Client, table: Table
) -> None:
    to_act = table.public()["status"]["to_act"][0]
    idle = next(seat for seat in range(2) if seat != to_act)
    flip = encode({"type": "setup-flip", "row": 0, "col": 0})
    draw = encode({"type": "draw", "source": "stock"})
    path = url(table)
    version = table.me(to_act)["version"]
    used = post(
        api_base, path, flip, {"Content-Type": LEAN, "Idempotency-Key": "used"} | table.auth(to_act)
    )
    assert used[0] == 200
    other = open_table(http, "golf", 2, {"hands": 1})
    cases = {
        (409, "not_your_turn"): (path, flip, table.auth(idle)),
        (409, "setup_incomplete"): (path, draw, table.auth(to_act)),
        (422, "illegal_position"): (path, flip, table.auth(to_act)),
        (401, "token_required"): (path, flip, {}),
        (401, "invalid_token"): (path, flip, {"Authorization": "Basic abc"}),
        (401, "invalid_token", "another game's"): (path, flip, other.auth(0)),
        (409, "stale_version"): (path, flip, table.auth(to_act) | {"If-Match": f'"{version}"'}),
        (422, "invalid_request"): (path, flip, table.auth(to_act) | {"If-Match": "yesterday"}),
        (422, "idempotency_key_reused"): (
            path,
            encode({"type": "setup-flip", "row": 1, "col": 1}),
            table.auth(to_act) | {"Idempotency-Key": "used"},
        ),
        (404, "game_not_found"): ("/games/00000000deadbeef/actions", flip, table.auth(to_act)),
    }
    for expected, (where, body, headers) in cases.items():
        assert problem_code(both(api_base, where, body, headers)) == expected[:2], expected


BAD = {
    "malformed JSON": (b'{"type": "draw", ', {}, 400, "malformed_request"),
    "not an action": (b'{"type": "cheat"}', {}, 422, "invalid_request"),
    "a number as a string": (
        b'{"type": "setup-flip", "row": "0", "col": 0}',
        {},
        422,
        "invalid_request",
    ),
    "too deep": (b"[" * 40 + b"]" * 40, {}, 400, "body_too_deep"),
    "empty": (b"", {}, 422, "invalid_request"),
    "too large": (b'{"type": "draw", "pad": "' + b"x" * 20_000 + b'"}', {}, 413, "body_too_large"),
    "invalid Idempotency-Key": (
        b'{"type": "draw"}',
        {"Idempotency-Key": "k" * 129},
        422,
        "invalid_request",
    ),
    "If-Match too long": (b'{"type": "draw"}', {"If-Match": "1" * 41}, 422, "invalid_request"),
}


@pytest.mark.parametrize("case", list(BAD))
def test_a_bad_request_is_the_same_problem_by_either_path(
    api_base: str, table: Table, case: str
) -> None:
    body, headers, status, code = BAD[case]
    seat = table.public()["status"]["to_act"][0]
    answer = both(api_base, url(table), body, table.auth(seat) | headers)
    assert problem_code(answer) == (status, code)


def test_another_content_type_is_refused_as_before(api_base: str, table: Table) -> None:
    seat = table.public()["status"]["to_act"][0]
    flip = encode({"type": "setup-flip", "row": 0, "col": 0})
    headers = table.auth(seat) | {"Content-Type": "text/plain"}
    answer = post(api_base, url(table), flip, headers)
    assert problem_code(answer) == (415, "unsupported_media_type")
    assert table.me(seat)["version"] == table.public()["version"]
