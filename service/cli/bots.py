"""`fairway bots`: the bot runner as a process of its own (service/bots/runner.py).

For a deployment that sets FAIRWAY_BOTS=off on its web instances and runs the bots beside
them; running it in several places at once is safe too (each bot move is made once). Runs
until SIGTERM or SIGINT.
"""

from __future__ import annotations

from service.bots.runner import BotRunner
from service.cli.consumer import run_consumer


def run_bots() -> int:
    return run_consumer(
        "bots",
        lambda settings, feed, games: BotRunner(
            feed, games, think=settings.bot_think, concurrency=settings.bot_concurrency
        ),
        pool_size=lambda settings: max(2, min(settings.pool_size, settings.bot_concurrency + 2)),
    )
