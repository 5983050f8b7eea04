"""Reads and actions on one game never fail because of each other (issue 7, item 1).

Given one game, when readers hammer its views and feed while its seats act (keyed and
unkeyed, a keyed action sent twice at once), on one instance or alternating between two,
then no request answers 5xx and every acknowledged action is stored exactly once.
"""

from __future__ import annotations

import itertools
import random
import threading
import uuid
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from contextlib import ExitStack
from pathlib import Path

import httpx
import msgspec
import pytest

from service.ops.settings import Settings
from tests.api.players import Table, open_table
from tests.api.server import running_server

pytestmark = [pytest.mark.api, pytest.mark.slow]


@pytest.fixture(params=["embedded, one instance", "postgres, one instance", "postgres, two"])
def instances(
    request: pytest.FixtureRequest, tmp_path: Path, api_settings: Settings
) -> Iterator[list[httpx.Client]]:
    kind: str = request.param
    count = 2 if kind.endswith("two") else 1
    url = None if kind.startswith("embedded") else api_settings.database_url
    with ExitStack() as stack:
        clients = []
        for n in range(count):
            settings = msgspec.structs.replace(
                api_settings, database_url=url, data_dir=tmp_path / str(n)
            )
            base = stack.enter_context(running_server(settings))
            clients.append(stack.enter_context(httpx.Client(base_url=base, timeout=30)))
        yield clients


def read_until(stop: threading.Event, client: httpx.Client, game_id: str) -> list[int]:
    """Read the game every way a spectator can until told to stop; the statuses seen."""
    statuses = []
    paths = itertools.cycle(
        [f"/games/{game_id}/view", f"/games/{game_id}/events", f"/games/{game_id}"]
    )
    while not stop.is_set():
        statuses.append(client.get(next(paths)).status_code)
    return statuses


def test_readers_and_actors_on_one_game_get_no_5xx_and_every_action_is_stored_once(
    instances: list[httpx.Client],
) -> None:
    table = open_table(instances[0], "golf", 2, {"hands": 1})
    rng = random.Random(7)
    stop = threading.Event()
    acknowledged: list[tuple[int, int]] = []
    with ThreadPoolExecutor(max_workers=8) as pool:
        readers = [
            pool.submit(read_until, stop, instances[n % len(instances)], table.game_id)
            for n in range(3 * len(instances))
        ]
        try:
            for step in range(80):
                at = Table(
                    instances[step % len(instances)], table.game_id, table.creator, table.tokens
                )
                status = at.public()["status"]
                if status["phase"] == "game_over":
                    break
                seat = status["to_act"][0]
                action = rng.choice(at.me(seat)["legal_actions"])
                if step % 2:
                    response = at.act(seat, action)
                    answers = [response]
                else:  # the same keyed request twice at once: one set of events, one answer
                    key = str(uuid.uuid4())
                    twice = [
                        pool.submit(at.act, seat, action, **{"Idempotency-Key": key}) for _ in "ab"
                    ]
                    answers = [future.result() for future in twice]
                for answer in answers:
                    assert answer.status_code == 200, answer.text
                assert len({a.json()["version"] for a in answers}) == 1
                events = answers[0].json()["events"]
                acknowledged.append((events[0]["version"], events[-1]["version"]))
        finally:
            stop.set()
        seen = [status for reader in readers for status in reader.result()]
    assert seen, "the readers read"
    assert [s for s in seen if s >= 500] == []
    feed = instances[0].get(f"/games/{table.game_id}/events", params={"limit": 1000}).json()
    versions = [entry["version"] for entry in feed["events"]]
    assert versions == list(range(1, len(versions) + 1))
    # The acknowledged actions tile the stream after the start: none lost, none twice.
    first_action = acknowledged[0][0]
    tiled = [v for first, last in acknowledged for v in range(first, last + 1)]
    assert tiled == list(range(first_action, feed["version"] + 1))
    for client in instances:  # the event store reports each commit's size to /metrics
        if client.get("/ready").json()["store"] == "PostgresStore":
            assert appends_committed(client) > 0


def appends_committed(client: httpx.Client) -> float:
    for line in client.get("/metrics").text.splitlines():
        if line.startswith("fairway_append_batch_size_sum"):
            return float(line.split()[-1])
    return 0.0
