"""`fairway bots`: the bot runner as a process of its own (service/bots/runner.py).

For a deployment that sets FAIRWAY_BOTS=off on its web instances and runs the bots beside
them; running it in several places at once is safe too (each bot move is made once). Runs
until SIGTERM or SIGINT.
"""

from __future__ import annotations

import asyncio
import signal

from events.store import close_feed, open_feed, open_store
from service.bots.runner import BotRunner
from service.ops.logging import configure_logging, log
from service.ops.metrics import Metrics
from service.ops.settings import Settings
from service.play.games import GameService


def run_bots() -> int:
    settings = Settings.from_env()
    configure_logging(settings.log_level, settings.log_format)
    return asyncio.run(_main(settings))


async def _main(settings: Settings) -> int:
    store = await open_store(
        settings.database_url,
        settings.data_dir,
        pool_max_size=max(2, min(settings.pool_size, settings.bot_concurrency + 2)),
        db_timeout=settings.db_timeout,
    )
    try:  # the feed from a replica (FAIRWAY_FEED_DATABASE_URL) when set; acts on the primary
        feed = await open_feed(
            store, settings.feed_database_url, pool_max_size=2, db_timeout=settings.db_timeout
        )
    except BaseException:
        await store.close()
        raise
    games = GameService(
        store,
        Metrics(),
        settings.command_retries,
        cache_events=settings.cache_events,
        cache_finished=settings.cache_finished_games,
        seed_chain_hands=settings.seed_chain_hands,
    )
    runner = BotRunner(feed, games, think=settings.bot_think, concurrency=settings.bot_concurrency)
    stopped = asyncio.Event()
    loop = asyncio.get_running_loop()
    for signum in (signal.SIGTERM, signal.SIGINT):
        loop.add_signal_handler(signum, stopped.set)
    runner.start()
    log.info("bots_started")
    try:
        await stopped.wait()
    finally:
        await runner.stop()
        await close_feed(feed, store)
        await store.close()
        log.info("bots_stopped")
    return 0
