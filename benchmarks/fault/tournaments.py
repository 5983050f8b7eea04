"""The fault run's duplicate tournaments: an organiser opens one of bot players (duplicate
deals, rounds that start by themselves), starts its first round and waits for its end, then
opens the next, while the faults come. The bots process plays every table and the
instances' round keepers close the rounds. Checked afterwards: each round started and
closed once, and the tournament's audit (its seeds, seating, duplicate deals, travellers
against `round.closed`, every game) passes."""

from __future__ import annotations

import asyncio
import random
import threading
import time
import uuid
from collections import Counter
from typing import Any

import msgspec

from events.store import PostgresStore
from service.audit.tournament import audit_tournament, read_tournament

from .load import Client, GaveUp, Ledger, Stopped

PLAYERS = 8
"""Two tables of four."""


class Organiser:
    def __init__(self, bases: list[str], ledger: Ledger, stop: threading.Event) -> None:
        self.ledger, self.stop = ledger, stop
        self.client = Client(bases, ledger, random.Random(99), stop)

    def run(self) -> None:
        try:
            while not self.stop.is_set():
                try:
                    self.one()
                except GaveUp:
                    with self.ledger.lock:
                        self.ledger.abandoned += 1
        except Stopped:
            return
        finally:
            self.client.close()

    def one(self) -> None:
        body: dict[str, Any] = {
            "name": f"fault run {uuid.uuid4().hex[:6]}",
            "variant": "golf",
            "table_size": 4,
            "rounds": 2,
            "duplicate": True,
            "auto_rounds": True,
            "options": {"hands": 1},
        }
        created = self.client.call("POST", "/tournaments", body, key=str(uuid.uuid4()))
        assert created.status_code == 201, created.text
        tournament_id, organiser = (
            created.json()["tournament_id"],
            created.json()["organiser_token"],
        )
        path = f"/tournaments/{tournament_id}"
        for number in range(PLAYERS):
            player = {"name": f"bot{number}", "bot": "random"}
            registered = self.client.call(
                "POST", f"{path}/players", player, token=organiser, key=str(uuid.uuid4())
            )
            assert registered.status_code == 201, registered.text
        started = self.client.call("POST", f"{path}/rounds", token=organiser, key=str(uuid.uuid4()))
        assert started.status_code == 201, started.text
        with self.ledger.lock:
            self.ledger.tournaments.append(tournament_id)
        while not self.stop.is_set():
            if self.client.call("GET", path).json()["phase"] == "ended":
                with self.ledger.lock:
                    self.ledger.tournaments_ended += 1
                return
            time.sleep(0.5)


async def check_tournaments(url: str, ids: list[str]) -> tuple[int, list[str]]:
    """(rounds closed, failures) of every tournament the organiser opened."""
    store = await PostgresStore.open(url)
    failures: list[str] = []
    closed_rounds = 0
    try:
        for tournament_id in ids:
            rows, games = await read_tournament(store, tournament_id)
            started = Counter(
                msgspec.json.decode(r.data)["round"] for r in rows if r.type == "round.started"
            )
            closed = Counter(
                msgspec.json.decode(r.data)["round"] for r in rows if r.type == "round.closed"
            )
            closed_rounds += len(closed)
            if any(c > 1 for c in started.values()) or any(c > 1 for c in closed.values()):
                failures.append(f"tournament {tournament_id}: rounds twice {started}, {closed}")
            elif set(closed) - set(started):
                failures.append(f"tournament {tournament_id}: closed {closed}, started {started}")
            report = audit_tournament(tournament_id, rows, games)
            if not report.ok:
                text = msgspec.json.encode(report)[:600]
                failures.append(f"audit of tournament {tournament_id}: {text!r}")
    finally:
        await store.close()
    return closed_rounds, failures


def tournaments_checked(url: str, ledger: Ledger) -> tuple[str, list[str]]:
    rounds, failures = asyncio.run(check_tournaments(url, ledger.tournaments))
    figure = f"{len(ledger.tournaments)} opened, {ledger.tournaments_ended} ended, {rounds} rounds"
    return figure, failures
