"""A feed consumer as a process of its own (`fairway referee`, `fairway bots`): the store (and
the feed, from a replica when FAIRWAY_FEED_DATABASE_URL names one; it acts on the primary),
the game service, the consumer started, and everything closed again on SIGTERM or SIGINT. A
store it cannot reach yet is waited for (service/cli/reach.py)."""

from __future__ import annotations

import asyncio
import signal
from collections.abc import Callable
from typing import Protocol

from events.store import EventStore, close_feed, open_feed, open_store
from service.cli.reach import reach
from service.ops import collector
from service.ops.logging import configure_logging, log
from service.ops.metrics import Metrics
from service.ops.settings import Settings
from service.play.games import GameService


class Consumer(Protocol):
    def start(self) -> None: ...

    async def stop(self) -> None: ...


Make = Callable[[Settings, EventStore, GameService], Consumer]


def run_consumer(name: str, make: Make, pool_size: Callable[[Settings], int] = lambda _: 2) -> int:
    """Run the consumer `make` builds until SIGTERM or SIGINT; logs `<name>_started` and
    `<name>_stopped`. `pool_size`: the primary's connections (the feed has two of its own)."""
    settings = Settings.from_env()
    configure_logging(settings.log_level, settings.log_format)
    collector.settle()
    return asyncio.run(_main(name, make, pool_size(settings), settings))


async def _main(name: str, make: Make, pool_size: int, settings: Settings) -> int:
    store = await reach(
        name,
        lambda: open_store(
            settings.database_url,
            settings.data_dir,
            pool_max_size=pool_size,
            db_timeout=settings.db_timeout,
        ),
    )
    try:
        feed = await reach(
            name,
            lambda: open_feed(
                store, settings.feed_database_url, pool_max_size=2, db_timeout=settings.db_timeout
            ),
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
    consumer = make(settings, feed, games)
    stopped = asyncio.Event()
    loop = asyncio.get_running_loop()
    for signum in (signal.SIGTERM, signal.SIGINT):
        loop.add_signal_handler(signum, stopped.set)
    consumer.start()
    log.info(f"{name}_started")
    try:
        await stopped.wait()
    finally:
        await consumer.stop()
        await close_feed(feed, store)
        await store.close()
        log.info(f"{name}_stopped")
    return 0
