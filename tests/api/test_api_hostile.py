"""Hostile clients: they dodge the rate limit, nest JSON deep, bend types and names, post
forms and smuggle newlines. Each is refused with a problem, and nothing stored changes."""

from __future__ import annotations

import socket
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import httpx
import psycopg
import pytest

from service.ops.settings import Settings
from tests.api.players import Table, open_table
from tests.api.server import running_server
from tests.api.test_api_errors import problem

pytestmark = pytest.mark.api

Stored = Callable[[str], list[tuple[Any, ...]]]
JSON = {"content-type": "application/json"}


@pytest.fixture
def table(http: httpx.Client) -> Table:
    return open_table(http, "golf", 2, {"hands": 1})


@pytest.fixture
def all_events(database_url: str) -> Callable[[], int]:
    """How many events are stored in all, for requests that would open a game."""

    def count() -> int:
        with psycopg.connect(database_url, autocommit=True) as conn:
            row = conn.execute("SELECT count(*) FROM events").fetchone()
            return int(row[0]) if row else 0

    return count


def limited_server(
    database_url: str, tmp_path: Path, trusted_proxies: tuple[str, ...] = ()
) -> Iterator[httpx.Client]:
    """A server allowing each client a burst of 10 requests, refilled one every 100 s."""
    settings = Settings(
        database_url=database_url,
        data_dir=tmp_path,
        log_level="warning",
        log_format="json",
        rate_limit_per_second=0.01,
        rate_limit_burst=10,
        trusted_proxies=trusted_proxies,
    )
    with running_server(settings) as base, httpx.Client(base_url=base, timeout=20) as client:
        yield client


@pytest.fixture
def limited(database_url: str, tmp_path: Path) -> Iterator[httpx.Client]:
    yield from limited_server(database_url, tmp_path)


@pytest.fixture
def behind_proxy(database_url: str, tmp_path: Path) -> Iterator[httpx.Client]:
    """The same limits, with the test client's loopback address as a trusted proxy."""
    yield from limited_server(database_url, tmp_path, trusted_proxies=("127.0.0.0/8",))


def refused(answers: list[httpx.Response]) -> int:
    assert {a.status_code for a in answers} <= {200, 429}
    return sum(a.status_code == 429 for a in answers)


@pytest.mark.parametrize(
    "header",
    [
        lambda i: {"Authorization": f"Bearer token-{i}"},
        lambda i: {"Authorization": f"not even a scheme {i}"},
        lambda i: {"X-Forwarded-For": f"198.51.{i // 256}.{i % 256}"},
        lambda i: {"X-Forwarded-For": f"198.51.{i // 256}.{i % 256}", "X-Real-IP": f"10.0.0.{i}"},
    ],
    ids=["bearer token", "invalid authorization", "x-forwarded-for", "x-forwarded-for, x-real-ip"],
)
def test_a_new_header_per_request_does_not_dodge_the_rate_limit(
    limited: httpx.Client, header: Callable[[int], dict[str, str]]
) -> None:
    answers = [limited.get("/variants/golf", headers=header(i)) for i in range(1000)]
    assert refused(answers) >= 980
    problem(answers[-1], 429, "rate_limited")


def test_unknown_paths_count_against_the_limit_too(limited: httpx.Client) -> None:
    answers = [limited.get(f"/nowhere/{i}") for i in range(30)]
    assert [a.status_code for a in answers[:10]] == [404] * 10
    problem(answers[-1], 429, "rate_limited")


def test_behind_a_trusted_proxy_x_forwarded_for_names_the_client(
    behind_proxy: httpx.Client,
) -> None:
    # Each request from another client, as the proxy reports: none is refused.
    for i in range(100):
        ok = behind_proxy.get("/variants/golf", headers={"X-Forwarded-For": f"198.51.100.{i}"})
        assert ok.status_code == 200
    # One client that writes its own X-Forwarded-For: the proxy appends the address it saw,
    # and only that is believed.
    spoofed = [
        behind_proxy.get(
            "/variants/golf", headers={"X-Forwarded-For": f"203.0.113.{i % 250}, 192.0.2.7"}
        )
        for i in range(200)
    ]
    assert refused(spoofed) >= 180


DEEP = b"[" * 1000 + b"]" * 1000


def deep_in(field: str) -> bytes:
    return b'{"' + field.encode() + b'": ' + DEEP + b"}"


def test_deeply_nested_json_is_refused_everywhere_before_it_is_decoded(
    http: httpx.Client, table: Table, stored: Stored, all_events: Callable[[], int]
) -> None:
    before, total = stored(table.game_id), all_events()
    for url, body, headers in [
        ("/games", DEEP, {}),
        ("/games", deep_in("options"), {}),
        (f"/games/{table.game_id}/seats", deep_in("name"), {}),
        (f"/games/{table.game_id}/actions", DEEP, table.auth(0)),
        (f"/games/{table.game_id}/actions", deep_in("type"), table.auth(0)),
        ("/variants/golf/score", deep_in("cards"), {}),
    ]:
        assert len(body) < 2100
        problem(http.post(url, content=body, headers=JSON | headers), 400, "body_too_deep")
    assert stored(table.game_id) == before
    assert all_events() == total


def test_brackets_inside_strings_do_not_count_as_nesting(http: httpx.Client) -> None:
    title = "[" * 40 + "{" * 30
    created = http.post("/games", json={"variant": "golf", "seats": 2, "title": title})
    assert created.status_code == 201, created.text


@pytest.mark.parametrize(
    "body",
    [
        b'{"variant": "golf", "seats": "2"}',
        b'{"variant": "golf", "seats": 2.0}',
        b'{"variant": "golf", "seats": 1e1}',
        b'{"variant": "golf", "seats": true}',
        b'{"variant": "golf", "seats": 2, "options": {"hands": "3"}}',
    ],
)
def test_a_number_must_be_sent_as_an_integer(
    http: httpx.Client, all_events: Callable[[], int], body: bytes
) -> None:
    total = all_events()
    answer = problem(http.post("/games", content=body, headers=JSON), 422, "invalid_request")
    assert answer["errors"][0]["source"] == "body"
    assert all_events() == total


def test_an_action_with_a_string_for_a_number_is_refused(table: Table, stored: Stored) -> None:
    seat = table.public()["status"]["to_act"][0]
    before = stored(table.game_id)
    for action in (
        {"type": "setup-flip", "row": "0", "col": 0},
        {"type": "setup-flip", "row": 0.0, "col": 0},
    ):
        problem(table.act(seat, action), 422, "invalid_request")
    claim = table.http.post(f"/games/{table.game_id}/seats", json={"name": "x", "seat": "1"})
    problem(claim, 422, "invalid_request")
    assert stored(table.game_id) == before


UNSHOWABLE = [
    "\u202egnp.exe",
    "Ada\u2066",
    "A\u200bda",
    "A\u200dda",
    "Ada\u2060",
    "\ufeffAda",
    "Ada\u2028",
    "Ada\u2029",
    "Ada\n",
    "Ada\x7f",
    "Ada\x85",
    "   ",
    "\u3000",
    "Ada\U000e0041",  # a tag character: invisible text inside the name
    "Ada\ue000",  # private use: each system draws its own glyph, or none
    "Ada\U0010fffd",
    "Ada\u0378",  # not assigned by Unicode
]


@pytest.mark.parametrize("name", UNSHOWABLE, ids=[repr(n) for n in UNSHOWABLE])
def test_names_and_titles_refuse_what_would_mislead_another_player(
    http: httpx.Client, all_events: Callable[[], int], name: str
) -> None:
    created = http.post("/games", json={"variant": "golf", "seats": 2}).json()
    total = all_events()
    problem(
        http.post(f"/games/{created['game_id']}/seats", json={"name": name}), 422, "invalid_request"
    )
    title = {"variant": "golf", "seats": 2, "title": name}
    problem(http.post("/games", json=title), 422, "invalid_request")
    assert all_events() == total


def test_a_refused_character_is_named_by_its_code_point(http: httpx.Client) -> None:
    created = http.post("/games", json={"variant": "golf", "seats": 2}).json()
    answer = http.post(f"/games/{created['game_id']}/seats", json={"name": "Ada\U000e0041"})
    assert answer.status_code == 422
    (error,) = answer.json()["errors"]
    assert "U+E0041" in error["message"]
    assert "tag character" in error["message"]


def test_a_name_is_kept_composed_however_its_accents_were_typed(http: httpx.Client) -> None:
    created = http.post("/games", json={"variant": "golf", "seats": 2, "title": "Cafe\u0301"})
    assert created.status_code == 201, created.text
    game_id = created.json()["game_id"]
    claimed = http.post(f"/games/{game_id}/seats", json={"name": "Zoe\u0301"})  # NFD
    assert claimed.status_code == 201, claimed.text
    game = http.get(f"/games/{game_id}").json()
    assert game["title"] == "Caf\u00e9"
    assert "Zo\u00e9" in [seat["name"] for seat in game["seats"]]


def test_ordinary_names_are_welcome(http: httpx.Client) -> None:
    created = http.post("/games", json={"variant": "golf", "seats": 2, "title": ""}).json()
    for name in ("José", "李小龙"):
        assert (
            http.post(f"/games/{created['game_id']}/seats", json={"name": name}).status_code == 201
        )


@pytest.mark.parametrize(
    ("content_type", "body"),
    [
        ("application/x-www-form-urlencoded", b"variant=golf&seats=2"),
        ("text/plain", b'{"variant": "golf", "seats": 2}'),
        ("multipart/form-data; boundary=x", b'--x\r\n\r\n{"variant": "golf"}\r\n--x--'),
        (None, b'{"variant": "golf", "seats": 2}'),
    ],
)
def test_a_body_that_is_not_json_is_415(
    http: httpx.Client, all_events: Callable[[], int], content_type: str | None, body: bytes
) -> None:
    total = all_events()
    headers = {} if content_type is None else {"content-type": content_type}
    request = http.build_request("POST", "/games", content=body, headers=headers)
    assert request.headers.get("content-type") == content_type
    problem(http.send(request), 415, "unsupported_media_type")
    assert all_events() == total


def test_a_form_posted_action_is_415_and_stores_nothing(table: Table, stored: Stored) -> None:
    seat = table.public()["status"]["to_act"][0]
    before = stored(table.game_id)
    answer = table.http.post(
        f"/games/{table.game_id}/actions",
        content=b'{"type": "setup-flip", "row": 0, "col": 0}',
        headers=table.auth(seat) | {"content-type": "text/plain"},
    )
    problem(answer, 415, "unsupported_media_type")
    assert stored(table.game_id) == before


def test_json_with_parameters_or_a_json_suffix_is_json(http: httpx.Client) -> None:
    for content_type in ("application/json; charset=utf-8", "application/vnd.fairway+json"):
        created = http.post(
            "/games",
            content=b'{"variant": "golf", "seats": 2}',
            headers={"content-type": content_type},
        )
        assert created.status_code == 201, created.text


def test_a_game_id_with_a_trailing_newline_is_not_served(table: Table, stored: Stored) -> None:
    before = stored(table.game_id)
    http = table.http
    for path in ("", "/view", "/scores", "/events"):
        problem(http.get(f"/games/{table.game_id}%0A{path}"), 400, "invalid_request")
    claimed = http.post(f"/games/{table.game_id}%0A/seats", json={"name": "eve"})
    problem(claimed, 400, "invalid_request")
    assert stored(table.game_id) == before


def test_a_variant_with_a_trailing_newline_is_refused(http: httpx.Client) -> None:
    problem(http.post("/games", json={"variant": "golf\n", "seats": 2}), 422, "invalid_request")


def test_head_answers_like_get_without_a_body(table: Table) -> None:
    http = table.http
    health = http.head("/health")
    assert health.status_code == 200
    assert health.content == b""
    got, head = http.get(f"/games/{table.game_id}"), http.head(f"/games/{table.game_id}")
    assert head.status_code == 200
    assert head.content == b""
    assert head.headers["etag"] == got.headers["etag"]
    assert head.headers["content-type"] == got.headers["content-type"]
    problem(http.get("/games/00000000deadbeef"), 404, "game_not_found")
    assert http.head("/games/00000000deadbeef").status_code == 404


def test_a_client_gone_mid_body_is_a_400_not_a_500(api_base: str, http: httpx.Client) -> None:
    """Given a request that promises 100 bytes of body and sends 10 before hanging up, then
    the service answers it as a malformed request (counted as 400), never as an error of its
    own (a 500 with a traceback in the log)."""

    def counted(status: int) -> int:
        metrics = http.get("/metrics").text
        line = f'fairway_http_requests_total{{method="POST",route="/games",status="{status}"}}'
        return sum(float(row.split()[-1]) for row in metrics.splitlines() if row.startswith(line))

    before = counted(400), counted(500)
    host, port = api_base.removeprefix("http://").split(":")
    with socket.create_connection((host, int(port)), timeout=5) as sock:
        sock.sendall(
            b"POST /games HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n"
            b"Content-Length: 100\r\n\r\n" + b'{"variant"'
        )
    deadline = time.monotonic() + 10
    while counted(400) == before[0] and time.monotonic() < deadline:
        time.sleep(0.05)
    assert (counted(400), counted(500)) == (before[0] + 1, before[1])
