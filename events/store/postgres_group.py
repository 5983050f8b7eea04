"""Group commit: appends that arrive while another commit is running wait for it, then go to
the database together, in one statement and one transaction (`fairway_append_together`,
events/migrations/0008_cheaper_append.sql), each at its own expected version, and each caller
is answered after that commit with its own outcome.

No timer gathers a batch: an append that finds nothing in flight is sent at once, alone, as
it always was; a batch is only what queued while the commit before it ran (at most
`max_size` appends, oldest first). So one writer waits for nobody, and many writers share
round trips and commits instead of queueing for pooled connections one by one.

A batch never waits for a stream's lock: an append whose stream another transaction holds
comes back `Busy` and is then sent alone (appends of one stream in their order), so it waits
as it would have alone and the rest of its batch is answered without it. Before, the whole
batch waited behind it, and a wait past the statement timeout failed every append in it.

Each caller's wait is bounded as a lone append's is: a caller still waiting `timeout` after it
asked gets `StoreUnavailable` (its append may still commit: its outcome is unknown, as after
any timeout, and a retry with the same event ids lands on the idempotent path).
"""

from __future__ import annotations

import asyncio
from collections import deque
from collections.abc import Awaitable, Callable, Sequence
from typing import Any, Final

from events.store.base import PreparedEvent, StoreError, StoreUnavailable

Rows = list[tuple[Any, ...]]
"""An append's stored rows: (stream version, global position, hash), one per event."""
Outcome = Rows | Exception

MOST_PER_BATCH: Final = 64
"""Each append of a batch is a subtransaction: past 64 in one transaction, PostgreSQL no
longer caches a backend's subtransaction ids, which slows every snapshot in the cluster."""


class Busy(Exception):
    """`together` did not take this append's stream lock without waiting (another
    transaction holds it); it goes alone after its batch (never to the caller)."""


class Pending:
    """An append waiting for its batch."""

    __slots__ = ("expected", "future", "prepared", "stream_id")

    def __init__(
        self,
        stream_id: str,
        expected: int,
        prepared: list[PreparedEvent],
        future: asyncio.Future[Rows],
    ) -> None:
        self.stream_id = stream_id
        self.expected = expected
        self.prepared = prepared
        self.future = future


class GroupCommit:
    """`alone(stream_id, expected, prepared)` commits one append and returns its rows (or
    raises the store's exception); `together(batch)` commits several in one transaction and
    returns each one's rows or exception, in the batch's order (or raises when the whole
    batch failed: every append in it gets that exception); `Busy` sends that append alone.
    `sent(size)` is told the size of every commit, lone ones included."""

    def __init__(
        self,
        alone: Callable[[str, int, list[PreparedEvent]], Awaitable[Rows]],
        together: Callable[[Sequence[Pending]], Awaitable[list[Outcome]]],
        sent: Callable[[int], None],
        max_size: int = 32,
        timeout: float = 2.0,
    ) -> None:
        if not 1 <= max_size <= MOST_PER_BATCH:
            raise ValueError(f"a batch holds 1 to {MOST_PER_BATCH} appends")
        self._alone = alone
        self._together = together
        self._sent = sent
        self._max_size = max_size
        self._timeout = timeout
        self._queue: deque[Pending] = deque()
        self._busy = False
        self._drainer: asyncio.Task[None] | None = None
        self._lone: set[asyncio.Task[None]] = set()

    async def append(self, stream_id: str, expected: int, prepared: list[PreparedEvent]) -> Rows:
        if not self._busy:  # nothing in flight: go now, alone
            self._busy = True
            try:
                self._sent(1)
                return await self._alone(stream_id, expected, prepared)
            finally:
                self._busy = False
                if self._queue:
                    self._drain_soon()
        loop = asyncio.get_running_loop()
        future: asyncio.Future[Rows] = loop.create_future()
        timer = loop.call_later(self._timeout, _give_up, future, self._timeout)
        self._queue.append(Pending(stream_id, expected, prepared, future))
        try:
            return await future
        finally:
            timer.cancel()

    async def close(self) -> None:
        """Waits for the appends queued or in flight (each ends within its deadline)."""
        if self._drainer is not None:
            await asyncio.shield(self._drainer)
        if self._lone:  # the drainer, which starts them, has ended
            await asyncio.wait(set(self._lone))

    def _drain_soon(self) -> None:
        self._busy = True
        self._drainer = asyncio.create_task(self._drain(), name="fairway-group-commit")

    async def _drain(self) -> None:
        batch: list[Pending] = []
        try:
            while batch := self._take():
                self._sent(len(batch))
                outcomes = await self._commit(batch)
                busy: dict[str, list[Pending]] = {}
                for pending, outcome in zip(batch, outcomes, strict=True):
                    if isinstance(outcome, Busy):
                        busy.setdefault(pending.stream_id, []).append(pending)
                    else:
                        _settle(pending.future, outcome)
                for appends in busy.values():
                    self._go_alone(appends)
                # One turn of the event loop (no timer): callers just answered that append
                # again at once join the next batch instead of one of them going alone.
                await asyncio.sleep(0)
        finally:  # cancelled: an append in flight may have committed, a queued one has not
            for pending in batch:
                _settle(pending.future, StoreUnavailable("the append was interrupted"))
            while self._queue:
                _settle(self._queue.popleft().future, StoreError("the event store is closed"))
            self._busy = False

    async def _commit(self, batch: list[Pending]) -> list[Outcome]:
        try:
            if len(batch) == 1:
                (one,) = batch
                return [await self._alone(one.stream_id, one.expected, one.prepared)]
            return await self._together(batch)
        except Exception as exc:  # the whole batch failed (a lost connection...)
            return [exc] * len(batch)

    def _go_alone(self, appends: list[Pending]) -> None:
        """Busy appends of one stream, alone, one after another, in their order; each
        stream's in a task of its own (each may wait for its lock as long as a lone append)."""
        task = asyncio.create_task(self._one_by_one(appends), name="fairway-append-alone")
        self._lone.add(task)
        task.add_done_callback(self._lone.discard)

    async def _one_by_one(self, appends: list[Pending]) -> None:
        try:
            for pending in appends:
                if pending.future.done():  # given up or cancelled meanwhile
                    continue
                self._sent(1)
                outcome: Outcome
                try:
                    outcome = await self._alone(
                        pending.stream_id, pending.expected, pending.prepared
                    )
                except Exception as exc:
                    outcome = exc
                _settle(pending.future, outcome)
        finally:  # cancelled: the one in flight may have committed
            for pending in appends:
                _settle(pending.future, StoreUnavailable("the append was interrupted"))

    def _take(self) -> list[Pending]:
        batch: list[Pending] = []
        while self._queue and len(batch) < self._max_size:
            pending = self._queue.popleft()
            if not pending.future.done():  # neither given up nor cancelled
                batch.append(pending)
        return batch


def _settle(future: asyncio.Future[Rows], outcome: Outcome) -> None:
    if future.done():
        return
    if isinstance(outcome, Exception):
        future.set_exception(outcome)
    else:
        future.set_result(outcome)


def _give_up(future: asyncio.Future[Rows], timeout: float) -> None:
    _settle(future, StoreUnavailable(f"the event store did not answer within {timeout:g} s"))
