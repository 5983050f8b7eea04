"""One long-running task of a process (the feed watcher, the referee, the round keeper):
started once, cancelled and awaited on stop, so shutdown never leaves it running."""

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
        """Cancel the task and wait until it has ended; nothing if it is not running. A
        cancel the task lost (a wait that ended in the very turn it was cancelled: see
        `asyncio.wait_for` on Python 3.11) is sent again, so a stop always ends."""
        task, self._task = self._task, None
        if task is None:
            return
        while not task.done():
            task.cancel()
            await asyncio.wait({task}, timeout=AGAIN)
        failed = None if task.cancelled() else task.exception()
        if failed is not None:
            raise failed
