"""The projector as `fairway projector` runs it, timing each event from its recorded time to
the commit of its batch. Started by benchmarks/api_load.py --projector redis; on SIGINT or
SIGTERM it prints the lag percentiles and removes its Redis keys.

    .venv/bin/python benchmarks/projection_lag.py --database-url URL --redis-url URL
        --prefix P [--skip 5]
"""

from __future__ import annotations

import argparse
import asyncio
import signal
import sys
import time
from collections.abc import Sequence
from datetime import UTC, datetime
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from events.store import PostgresStore, RecordedEvent  # noqa: E402
from projections.catalog import PROJECTIONS  # noqa: E402
from projections.projector import Projector  # noqa: E402
from projections.redis_store import RedisProjectionStore  # noqa: E402
from service.ops.logging import configure_logging  # noqa: E402
from tests.support.redis_keys import forget  # noqa: E402


def percentile(ordered: Sequence[float], p: float) -> float:
    if not ordered:
        return float("nan")
    return ordered[min(len(ordered) - 1, int(len(ordered) * p / 100))]


async def main(args: argparse.Namespace) -> None:
    configure_logging("warning", "json")  # on stderr: stdout carries the one line of figures
    feed = await PostgresStore.open(args.database_url, poll_interval=0.5)
    store = RedisProjectionStore.from_url(args.redis_url, args.prefix)
    started = time.monotonic()
    lags: list[float] = []
    batches: list[int] = []

    def observe(events: Sequence[RecordedEvent]) -> None:
        if time.monotonic() - started < args.skip:
            return
        now = datetime.now(UTC)
        lags.extend((now - e.recorded_at).total_seconds() for e in events)
        batches.append(len(events))

    projector = Projector(PROJECTIONS, store, feed, observe=observe)
    task = asyncio.create_task(projector.run())
    loop = asyncio.get_running_loop()
    for signum in (signal.SIGINT, signal.SIGTERM):
        loop.add_signal_handler(signum, task.cancel)
    cpu = time.process_time()
    try:
        await task
    except asyncio.CancelledError:
        pass
    finally:
        cpu = time.process_time() - cpu
        await store.close()
        await feed.close()
        await forget(args.redis_url, args.prefix)
    ordered = sorted(lags)
    ms = [percentile(ordered, p) * 1000 for p in (50, 90, 99)]
    mean_batch = sum(batches) / len(batches) if batches else 0.0
    print(
        f"projection lag (recorded -> committed), {len(ordered):,} events after the first "
        f"{args.skip:.0f} s: p50 {ms[0]:.1f} ms, p90 {ms[1]:.1f} ms, p99 {ms[2]:.1f} ms, "
        f"max {(ordered[-1] if ordered else float('nan')) * 1000:.1f} ms; "
        f"{mean_batch:.1f} events a batch; projector CPU {cpu:.1f} s",
        flush=True,
    )


if __name__ == "__main__":
    parser = argparse.ArgumentParser()
    parser.add_argument("--database-url", required=True)
    parser.add_argument("--redis-url", required=True)
    parser.add_argument("--prefix", required=True)
    parser.add_argument("--skip", type=float, default=5.0, help="seconds not counted at first")
    asyncio.run(main(parser.parse_args()))
