"""Opening the event store from a background process (`fairway projector`, `fairway referee`,
`fairway bots`): while it cannot be reached, wait and try again, rather than exit.

These processes have nobody to answer; a database that is down at their start (a failover, a
restart, a database that a migration job is still creating) is a wait, not a reason to end.
Had they exited, a supervisor's back-off (minutes, after a few restarts) would leave the read
models and the tables' clocks stopped long after the database came back; the fault run
(benchmarks/fault_run.py) counts such an exit as a process that died by itself. Each failed
try is logged with the store's reason (`<name>_store_unreachable`), so a wrong address shows
in the log at once; SIGTERM ends the wait as it would the process. `fairway serve` still
refuses to start without its database: it answers clients, and its operator is watching.
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable
from typing import Final, TypeVar

from events.store import StoreUnavailable
from service.ops.logging import log

T = TypeVar("T")

FIRST_PAUSE: Final = 0.25
LONGEST_PAUSE: Final = 5.0


async def reach(name: str, open_: Callable[[], Awaitable[T]]) -> T:
    """`open_()`'s result, tried again after a pause (doubling up to `LONGEST_PAUSE`) for as
    long as it raises `StoreUnavailable`."""
    pause = FIRST_PAUSE
    while True:
        try:
            return await open_()
        except StoreUnavailable as error:
            log.warning(f"{name}_store_unreachable", error=str(error), retry_in=pause)
        await asyncio.sleep(pause)
        pause = min(pause * 2, LONGEST_PAUSE)
