"""`fairway referee`: the referee as a process of its own (service/referee/referee.py).

For a deployment that sets FAIRWAY_REFEREE=off on its web instances and runs the referee
beside them; running it in several places at once is safe too (each turn is played once).
Runs until SIGTERM or SIGINT.
"""

from __future__ import annotations

from service.cli.consumer import run_consumer
from service.referee.referee import Referee


def run_referee() -> int:
    return run_consumer(
        "referee", lambda settings, feed, games: Referee(feed, games, tick=settings.referee_tick)
    )
