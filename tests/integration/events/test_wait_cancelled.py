"""A reader waiting for the feed stops when cancelled, even when the wake-up comes in the
very turn the cancel does. On Python 3.11 `asyncio.wait_for` then returns the wait's result
and the cancel is lost: the referee's wait went on, and its stop waited for ever (a whole
CI run hung on it)."""

from __future__ import annotations

import asyncio

import pytest

from events.store import EventStore
from tests.integration.events.conftest import settled_checkpoint

pytestmark = pytest.mark.integration


async def test_a_wait_woken_as_it_is_cancelled_still_ends_cancelled(store: EventStore) -> None:
    head = await settled_checkpoint(store)  # feed_head() may stand behind appends made
    waiting = asyncio.create_task(store.wait_for_events(head, 30.0))
    await asyncio.sleep(0.2)  # waiting for a wake-up now: the feed holds nothing after head
    assert not waiting.done()
    store._wake_waiters()  # the listener's wake-up (nothing appended: the wait goes on)...
    waiting.cancel()  # ...and the stop's cancel, in one turn of the loop
    await asyncio.wait({waiting}, timeout=10)  # a bound for the test, not a timing
    assert waiting.cancelled(), "the wait went on past its cancel"
