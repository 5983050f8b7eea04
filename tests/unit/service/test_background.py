"""A process's long-running task stops when asked, even one that lost a cancel."""

from __future__ import annotations

import asyncio

import pytest

from service.ops.background import Background

pytestmark = pytest.mark.unit


async def test_a_stop_ends_a_task_that_lost_its_first_cancel() -> None:
    """As a task waiting in `asyncio.wait_for` does on Python 3.11 when its wait ends in the
    turn it is cancelled: the first cancel is gone, the loop goes on."""
    lost, ended = 0, False

    async def stubborn() -> None:
        nonlocal lost, ended
        try:
            while True:
                try:
                    await asyncio.sleep(60)
                except asyncio.CancelledError:
                    if lost:
                        raise
                    lost += 1  # swallowed, as the race does
        finally:
            ended = True

    background = Background("stubborn", stubborn)
    background.start()
    await asyncio.sleep(0)
    stopping = asyncio.create_task(background.stop())
    await asyncio.wait({stopping}, timeout=10)  # a bound for the test, not a timing
    assert ended, "the task runs on after its stop"
    assert stopping.done()
    assert lost == 1


async def test_a_stop_raises_what_the_task_failed_with() -> None:
    async def failing() -> None:
        raise RuntimeError("broken")

    background = Background("failing", failing)
    background.start()
    await asyncio.sleep(0)
    with pytest.raises(RuntimeError, match="broken"):
        await background.stop()
