"""`fairway referee`: the referee as a process of its own (service/referee/referee.py).

For a deployment that sets FAIRWAY_REFEREE=off on its web instances and runs the referee
beside them; running it in several places at once is safe too (each turn is played once).
Runs until SIGTERM or SIGINT.
"""

from __future__ import annotations

import asyncio
import signal

from events.store import close_feed, open_feed, open_store
from service.ops.logging import configure_logging, log
from service.ops.metrics import Metrics
from service.ops.settings import Settings
from service.play.games import GameService
from service.referee.referee import Referee


def run_referee() -> int:
    settings = Settings.from_env()
    configure_logging(settings.log_level, settings.log_format)
    return asyncio.run(_main(settings))


async def _main(settings: Settings) -> int:
    store = await open_store(
        settings.database_url,
        settings.data_dir,
        pool_max_size=2,
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
    referee = Referee(feed, games, tick=settings.referee_tick)
    stopped = asyncio.Event()
    loop = asyncio.get_running_loop()
    for signum in (signal.SIGTERM, signal.SIGINT):
        loop.add_signal_handler(signum, stopped.set)
    referee.start()
    log.info("referee_started")
    try:
        await stopped.wait()
    finally:
        await referee.stop()
        await close_feed(feed, store)
        await store.close()
        log.info("referee_stopped")
    return 0
