"""Two instances of `fairway serve` on one database (FAIRWAY_BACKGROUND=leader, the default):
one of them runs the referee and the bots (its /metrics says `fairway_background_leader 1`),
the other stands by and plays nothing; clocked and bot games finish; when the leader stops,
the other takes over and a game begun before the hand-over still finishes."""

from __future__ import annotations

import random
import re
import time
from collections.abc import Callable, Iterator
from contextlib import ExitStack
from datetime import UTC, datetime, timedelta

import httpx
import msgspec
import pytest

from events.migrate import migrate
from service.ops.settings import Settings
from tests.api.bots import bot_game, join
from tests.api.players import concrete, open_table
from tests.api.server import running_server
from tests.support.services import throwaway_database

pytestmark = pytest.mark.api

WAIT = 60.0
"""Generous seconds for a game or a hand-over; nothing here times them."""
AHEAD = timedelta(hours=1)


@pytest.fixture
def settings(postgres_server_url: str, api_settings: Settings) -> Iterator[Settings]:
    """A database of its own (the session's server would lead on the shared one)."""
    with throwaway_database(postgres_server_url, "fairway_leader") as url:
        migrate(url)
        yield msgspec.structs.replace(api_settings, database_url=url, referee_tick=0.05)


def serve(stack: ExitStack, settings: Settings) -> httpx.Client:
    """An instance whose referee's clock runs an hour ahead: a clocked turn is out of time
    as soon as it begins."""
    base = stack.enter_context(
        running_server(settings, referee_clock=lambda: datetime.now(UTC) + AHEAD)
    )
    return stack.enter_context(httpx.Client(base_url=base, timeout=20))


def metric(client: httpx.Client, name: str) -> float:
    """The sum of `fairway_<name>`'s samples on this instance's /metrics (0 when absent)."""
    text = client.get("/metrics").text
    found = re.findall(rf"^fairway_{name}(?:{{[^}}]*}})? ([0-9.e+-]+)$", text, re.M)
    return sum(float(value) for value in found)


def until(what: str, holds: Callable[[], bool]) -> None:
    deadline = time.monotonic() + WAIT
    while not holds():
        assert time.monotonic() < deadline, what
        time.sleep(0.05)


def leads(client: httpx.Client) -> bool:
    return metric(client, "background_leader") == 1


def over(http: httpx.Client, game_id: str) -> bool:
    return bool(http.get(f"/games/{game_id}").json()["status"]["phase"] == "game_over")


def clocked_game_finishes(http: httpx.Client) -> None:
    table = open_table(http, "golf", 2, {"hands": 1, "turn_seconds": 5})
    until("the clocked game did not finish", lambda: over(http, table.game_id))


def bot_game_finishes(http: httpx.Client) -> None:
    bots = [{"seat": seat, "level": "random"} for seat in range(3)]
    body = {"variant": "golf", "seats": 3, "options": {"hands": 1}, "bots": bots}
    game_id = http.post("/games", json=body).json()["game_id"]
    until("the bots did not finish the game", lambda: over(http, game_id))


class Person:
    """Seat 0 of a game with a bot, played at random over HTTP."""

    def __init__(self, http: httpx.Client, game_id: str, token: str, rng: random.Random) -> None:
        self.http, self.game_id, self.rng = http, game_id, rng
        self.auth = {"Authorization": f"Bearer {token}"}
        self.deadline = time.monotonic() + WAIT

    def step(self, what: str) -> bool:
        """Act if the seat may, else wait a moment; False once the game is over."""
        assert time.monotonic() < self.deadline, what
        me = self.http.get(f"/games/{self.game_id}/me", headers=self.auth).json()
        if me["status"]["phase"] == "game_over":
            return False
        if me["legal_actions"]:
            action = concrete(self.rng.choice(me["legal_actions"]), self.rng)
            acted = self.http.post(f"/games/{self.game_id}/actions", json=action, headers=self.auth)
            assert acted.status_code in (200, 409), acted.text  # 409: the bot moved first
        else:
            time.sleep(0.05)
        return True


def test_one_instance_runs_the_referee_and_bots_and_games_finish(settings: Settings) -> None:
    with ExitStack() as stack:
        first = serve(stack, settings)
        until("the first instance did not take the lead", lambda: leads(first))
        second = serve(stack, settings)
        clocked_game_finishes(second)
        bot_game_finishes(second)
        assert leads(first)
        assert not leads(second)
        assert metric(first, "turns_played_for_total") > 0
        assert metric(first, "bot_moves_total") > 0
        # Each instance counts the moves whose append returned to it, another's included
        # (the same event ids): the one standing by tried none.
        assert metric(second, "turns_played_for_total") == 0
        assert metric(second, "bot_moves_total") == 0


def test_the_other_instance_takes_over_and_a_game_begun_before_finishes(
    settings: Settings,
) -> None:
    rng = random.Random(7)
    with ExitStack() as stays, ExitStack() as stops:
        first = serve(stops, settings)
        until("the first instance did not take the lead", lambda: leads(first))
        second = serve(stays, settings)
        game = bot_game(first, "golf", "random", seats=2)
        person = Person(first, game["game_id"], join(first, game), rng)
        while metric(first, "bot_moves_total") == 0:  # the person plays until the bot has
            person.step("the bot did not move")
        assert not leads(second)
        assert metric(second, "bot_moves_total") == 0
        stops.close()  # the leader stops: its connection closes, and the lock with it
        until("the other instance did not take over", lambda: leads(second))
        person.http = second
        while person.step("the game did not finish after the hand-over"):
            pass
        assert metric(second, "bot_moves_total") > 0, "the new leader's bot played on"
        clocked_game_finishes(second)
        assert metric(second, "turns_played_for_total") > 0
