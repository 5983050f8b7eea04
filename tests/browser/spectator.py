"""What a spectator's page received, checked against the rules: for each response, the cards
it names must be ones a spectator may know at the version it speaks of. The oracle folds the
events read straight from PostgreSQL (tests/api/test_api_no_leaks.py), not the view code."""

from __future__ import annotations

import json
from collections import Counter
from typing import Any

import psycopg

from domain.variants import fold
from events.schema.common import GameStarted
from tests.api.test_api_no_leaks import cards_in, stored_events
from tests.property.test_grid_properties import knowable as grid_knowable
from tests.property.test_shedding_properties import known_to as shedding_knowable


class Oracle:
    """What a spectator may know of one game at each version."""

    def __init__(self, database_url: str, game_id: str) -> None:
        self.events = stored_events(database_url, game_id)
        with psycopg.connect(database_url, autocommit=True) as conn:
            rows = conn.execute(
                "SELECT stream_version, tx_id::text FROM events WHERE stream_id = %s "
                "ORDER BY stream_version",
                (f"game:{game_id}",),
            ).fetchall()
        # The last version each event's write reached: a stream sends an event after its
        # write commits, redacted as the game then stands (a hand ended in that write
        # shows its cards).
        last: dict[str, int] = {}
        for version, tx in rows:
            last[tx] = version
        self.write_end = {version: last[tx] for version, tx in rows}
        self.started = next(i for i, e in enumerate(self.events) if isinstance(e, GameStarted))
        self.cache: dict[int, Counter[str]] = {}

    def known(self, version: int) -> Counter[str]:
        if version not in self.cache:
            if version <= self.started:
                self.cache[version] = Counter()
            else:
                decider, state = fold(self.events[self.started : version])
                oracle = shedding_knowable if decider.name == "tens-shedding" else grid_knowable
                self.cache[version] = oracle(state, None)
        return self.cache[version]


def stream_entries(body: str) -> list[dict[str, Any]]:
    return [
        json.loads(line[len("data: ") :])
        for line in body.replace("\r\n", "\n").split("\n")
        if line.startswith("data: ")
    ]


def leaks(oracle: Oracle, url: str, body: str) -> list[str]:
    """Cards in one response that the spectator may not know, named with where they were."""
    found = []
    if url.endswith("/stream"):
        entries = stream_entries(body)
        # An event may name what was known just before it (a public pile picked up into a
        # hand) or at any point of its write (a card turned up, a hand ended; the next hand
        # may be dealt in the same write). And the stream sends its events a page at a time,
        # each page redacted as of the newest version it sends (service/http/controllers/
        # stream.py `messages`): a stream that lags behind the game (a loaded machine) sends
        # an event late, with what is known by then (a hand over shows every card drawn in
        # it). The body does not say where a page ends, so the bound is the newest version
        # in the body; the strict check of each live event as it happens, on the raw stream,
        # is tests/api/test_api_no_leaks.py's.
        newest = max((entry["version"] for entry in entries), default=0)
        since: dict[int, Counter[str]] = {}
        later: Counter[str] = Counter()
        for version in range(oracle.write_end.get(newest, newest), 0, -1):
            later = later | oracle.known(version)
            since[version] = later
        for entry in entries:
            at = entry["version"]
            known = oracle.known(at - 1) | since[at]
            extra = cards_in(entry["event"]) - known
            if extra:
                found.append(f"{url} v{entry['version']}: {dict(extra)} in {entry['event']}")
        return found
    answer = json.loads(body) if body else {}
    if not isinstance(answer, dict):
        return [f"{url}: not an object"] if cards_in(answer) else []
    version = answer.get("version")
    shown = cards_in(answer)
    if shown and not isinstance(version, int):
        return [f"{url}: cards {dict(shown)} at no version"]
    extra = shown - oracle.known(version) if shown else Counter()
    if extra:
        found.append(f"{url} v{version}: {dict(extra)}")
    return found
