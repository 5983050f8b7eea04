"""Several service instances against one PostgreSQL: each is correct whatever the others did.

Each instance caches folded games; these tests make the caches stale on purpose."""

from __future__ import annotations

import random
import threading
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest

from service.ops.settings import Settings
from tests.api.players import Table, open_table
from tests.api.server import instance_settings, running_server

pytestmark = pytest.mark.api


@pytest.fixture
def second(api_settings: Settings, tmp_path: Path) -> Iterator[httpx.Client]:
    """A second instance of the service on the same database."""
    assert api_settings.database_url is not None
    settings = instance_settings(api_settings.database_url, tmp_path)
    with running_server(settings) as base, httpx.Client(base_url=base, timeout=20) as client:
        yield client


def on(client: httpx.Client, table: Table) -> Table:
    return Table(client, table.game_id, table.creator, table.tokens)


def test_two_instances_take_turns_on_one_game_without_losing_or_refusing_a_move(
    http: httpx.Client, second: httpx.Client, stored: Callable[[str], list[tuple[Any, ...]]]
) -> None:
    first_instance = open_table(http, "golf", 2, {"hands": 1})
    instances = [first_instance, on(second, first_instance)]
    rng = random.Random(11)
    for step in range(120):
        table = instances[step % 2]  # every request lands on the instance that did not act last
        status = table.public()["status"]
        if status["phase"] == "game_over":
            break
        seat = status["to_act"][0]
        action = rng.choice(table.me(seat)["legal_actions"])
        response = table.act(seat, action)
        assert response.status_code == 200, response.text
    rows = stored(first_instance.game_id)
    assert [row[0] for row in rows] == list(range(1, len(rows) + 1))
    assert len({row[1] for row in rows}) == len(rows), "no event stored twice"


def test_a_seat_claimed_on_one_instance_can_act_on_another(
    http: httpx.Client, second: httpx.Client
) -> None:
    created = http.post("/games", json={"variant": "basketball", "seats": 2}).json()
    game = created["game_id"]
    assert second.get(f"/games/{game}").status_code == 200  # the second instance caches it
    tokens = [
        http.post(f"/games/{game}/seats", json={"name": n}).json()["token"] for n in ("ann", "bob")
    ]
    started = second.post(
        f"/games/{game}/start", headers={"Authorization": f"Bearer {created['creator_token']}"}
    )
    assert started.status_code == 200, started.text
    peek = second.post(
        f"/games/{game}/actions",
        json={"type": "peek"},
        headers={"Authorization": f"Bearer {tokens[1]}"},
    )
    assert peek.status_code == 200, peek.text


def test_the_same_move_sent_to_two_instances_at_once_is_stored_once(
    http: httpx.Client, second: httpx.Client, stored: Callable[[str], list[tuple[Any, ...]]]
) -> None:
    table = open_table(http, "golf", 2, {"hands": 1})
    seat = table.public()["status"]["to_act"][0]
    on(second, table).public()  # warm the second instance's cache
    before = len(stored(table.game_id))
    action = {"type": "setup-flip", "row": 0, "col": 2}
    answers: list[httpx.Response] = []
    barrier = threading.Barrier(2)

    def send(client: httpx.Client) -> None:
        barrier.wait()
        answers.append(on(client, table).act(seat, action))

    threads = [threading.Thread(target=send, args=(c,)) for c in (http, second)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    codes = sorted(a.status_code for a in answers)
    assert codes[0] == 200
    assert codes[1] in (200, 422), "the second flips the same card again or is refused"
    rows = stored(table.game_id)
    assert [row[0] for row in rows] == list(range(1, len(rows) + 1))
    assert len(rows) == before + codes.count(200)
    if codes[1] == 422:
        assert next(a for a in answers if a.status_code == 422).json()["code"] == (
            "illegal_position"
        )


def test_a_keyed_retry_on_another_instance_replays_the_first_answer(
    http: httpx.Client, second: httpx.Client, stored: Callable[[str], list[tuple[Any, ...]]]
) -> None:
    table = open_table(http, "golf", 2, {"hands": 1})
    seat = table.public()["status"]["to_act"][0]
    on(second, table).public()
    action = {"type": "setup-flip", "row": 1, "col": 0}
    first = table.act(seat, action, **{"Idempotency-Key": "k-1"})
    after = stored(table.game_id)
    retried = on(second, table).act(seat, action, **{"Idempotency-Key": "k-1"})
    assert retried.status_code == 200
    assert retried.json()["events"] == first.json()["events"]
    assert retried.json()["version"] == first.json()["version"]
    assert stored(table.game_id) == after
