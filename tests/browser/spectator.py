"""What a spectator's page received, checked against the rules: for each response, the cards
it names must be ones a spectator may know at the version it speaks of. The oracle folds the
events read straight from PostgreSQL (tests/api/test_api_no_leaks.py), not the view code."""

from __future__ import annotations

import json
from collections import Counter
from typing import Any

from domain.variants import fold
from events.schema.common import GameStarted, HandEnded
from tests.api.test_api_no_leaks import cards_in, stored_events
from tests.property.test_grid_properties import knowable as grid_knowable
from tests.property.test_shedding_properties import known_to as shedding_knowable


class Oracle:
    """What a spectator may know of one game at each version."""

    def __init__(self, database_url: str, game_id: str) -> None:
        self.events = stored_events(database_url, game_id)
        self.started = next(i for i, e in enumerate(self.events) if isinstance(e, GameStarted))
        self.cache: dict[int, Counter[str]] = {}

    def hand_end_after(self, version: int) -> int:
        """The version of the first hand.ended at or after `version`."""
        return next(
            i + 1
            for i in range(version - 1, len(self.events))
            if isinstance(self.events[i], HandEnded)
        )

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
        for entry in stream_entries(body):
            at = entry["version"]
            if entry["event"]["type"] == "layouts.revealed":  # written with the hand's end
                at = oracle.hand_end_after(at)
            # An event may name what was known just before it (a public pile picked up into
            # a hand) or just after it (a card turned up).
            extra = cards_in(entry["event"]) - (oracle.known(at - 1) | oracle.known(at))
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
