"""One long-running task of a process (the feed watcher, the referee, the round keeper, the
projector): started once, cancelled and awaited on stop, so shutdown never leaves it
running."""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Coroutine
from typing import Any

AGAIN = 1.0
"""Seconds a stop waits for the task to end before it cancels it again."""


class Background:
    def __init__(self, name: str, run: Callable[[], Coroutine[Any, Any, None]]) -> None:
        self.name = name
        self._run = run
        self._task: asyncio.Task[None] | None = None

    def start(self) -> None:
        """Start the task unless it runs already."""
        if self._task is None:
            self._task = asyncio.create_task(self._run(), name=self.name)

    async def stop(self) -> None:
        """Cancel the task and wait until it has ended (`end`); nothing if it is not
        running."""
        task, self._task = self._task, None
        if task is not None:
            await end(task)


async def end(task: asyncio.Task[Any]) -> None:
    """Cancel `task` and wait until it has ended, then raise what it failed with, if it
    failed. A cancel the task lost is sent again every `AGAIN` seconds, so this always ends:
    on Python 3.11 a wait in `asyncio.wait_for` that ends in the very turn it is cancelled
    returns and drops the cancel, and redis-py sends every command through one (the likely
    cause of a test that hung nine minutes after a single cancel of a projector on Redis)."""
    while not task.done():
        task.cancel()
        await asyncio.wait({task}, timeout=AGAIN)
    failed = None if task.cancelled() else task.exception()
    if failed is not None:
        raise failed
