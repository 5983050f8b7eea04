"""`fairway projector`: the projections as a process of their own (with REDIS_URL).

Runs every projection until SIGTERM or SIGINT; `--rebuild NAME` builds that projection from
position zero into a new generation, switches readers to it and drops the old one, then
exits (a running projector follows the switch by itself). A store it cannot reach yet is
waited for (service/cli/reach.py).
"""

from __future__ import annotations

import asyncio
import signal
import sys

from events.store import close_feed, open_feed, open_store
from projections.catalog import PROJECTIONS, by_name, fresh
from projections.projector import Projector
from projections.redis_store import RedisProjectionStore
from service.cli.reach import reach
from service.ops import collector
from service.ops.background import end
from service.ops.logging import configure_logging, log
from service.ops.settings import Settings


def run_projector(rebuild: str | None) -> int:
    settings = Settings.from_env()
    if not settings.redis_url:
        print(
            "fairway projector: REDIS_URL is not set (without it the projections live in "
            "memory inside fairway serve)",
            file=sys.stderr,
        )
        return 2
    if rebuild is not None:
        try:
            by_name(rebuild)
        except KeyError as error:
            print(f"fairway projector: {error.args[0]}", file=sys.stderr)
            return 2
    configure_logging(settings.log_level, settings.log_format)
    collector.settle()
    return asyncio.run(_main(settings, rebuild))


async def _main(settings: Settings, rebuild: str | None) -> int:
    events = await reach(
        "projector",
        lambda: open_store(
            settings.database_url,
            settings.data_dir,
            pool_max_size=2,
            db_timeout=settings.db_timeout,
        ),
    )
    try:  # a replica (FAIRWAY_FEED_DATABASE_URL) when set; wake-ups come from the primary
        feed = await reach(
            "projector",
            lambda: open_feed(
                events, settings.feed_database_url, pool_max_size=2, db_timeout=settings.db_timeout
            ),
        )
    except BaseException:
        await events.close()
        raise
    assert settings.redis_url is not None
    store = RedisProjectionStore.from_url(settings.redis_url, settings.redis_prefix)
    projector = Projector(fresh(), store, feed)
    try:
        if rebuild is not None:
            number = await projector.rebuild(rebuild)
            log.info("projection_rebuilt", projection=rebuild, generation=number)
            print(f"rebuilt {rebuild}: generation {number}")
            return 0
        task = asyncio.create_task(projector.run())
        stopped = asyncio.Event()
        loop = asyncio.get_running_loop()
        for signum in (signal.SIGTERM, signal.SIGINT):
            loop.add_signal_handler(signum, stopped.set)
        log.info("projector_started", projections=[p.name for p in PROJECTIONS])
        asked = asyncio.create_task(stopped.wait())
        try:  # until a signal, or the projector's end (a failure: raised below)
            await asyncio.wait({task, asked}, return_when=asyncio.FIRST_COMPLETED)
        finally:
            asked.cancel()
            await end(task)  # cancelled again if it lost the cancel (service/ops/background.py)
        log.info("projector_stopped")
        return 0
    finally:
        await store.close()
        await close_feed(feed, events)
        await events.close()
