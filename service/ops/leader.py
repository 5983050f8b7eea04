"""The background consumers (the referee, the bots, the round keeper, an inline projector on
Redis) run once per deployment, not once per worker: in the process that holds the
installation's lead (events/store/lead.py: on PostgreSQL a session advisory lock on a
connection of its own).

FAIRWAY_BACKGROUND picks how (service/ops/settings.py):
- `leader` (the default): every process tries to take the lead, every `RETRY` seconds while
  another holds it; the one that holds it runs the consumers. When the holder dies its
  connection closes, the lock frees and another takes over at its next try; a holder that
  loses its connection stops its consumers until it holds the lead again. The embedded store
  is one process's: that process always leads.
- `always`: every process runs them (as before; safe, since each acts at an expected version).
- `never`: this process runs none (`fairway referee`, `fairway bots` and `fairway projector`
  run elsewhere).
"""

from __future__ import annotations

import asyncio
from collections.abc import Sequence
from typing import Protocol

from events.store import EventStore, StoreError
from service.ops.background import Background
from service.ops.logging import log
from service.ops.settings import BACKGROUND_MODES as MODES

RETRY = 2.0
"""Seconds a process that does not lead waits before it tries to take the lead again."""


class Consumer(Protocol):
    def start(self) -> None: ...

    async def stop(self) -> None: ...


class Leader:
    def __init__(
        self,
        store: EventStore,
        consumers: Sequence[Consumer],
        mode: str = "leader",
        retry: float = RETRY,
        name: str = "background",
    ) -> None:
        """`store`: the primary (a feed replica's locks are its own). `name`: the lead's;
        each name is held by one process (the projector on Redis has its own, per prefix)."""
        if mode not in MODES:
            raise ValueError(f"mode must be one of {', '.join(MODES)}, not {mode!r}")
        self.store = store
        self.consumers = list(consumers)
        self.mode = mode
        self.retry = retry
        self.name = name
        self.leading = False
        """Whether this process runs the consumers now."""
        self._background = Background(f"fairway-lead-{name}", self._hold)

    def start(self) -> None:
        if self.mode == "always":
            self._start_consumers()
        elif self.mode == "leader":
            self._background.start()

    async def stop(self) -> None:
        await self._background.stop()
        await self._stop_consumers()

    async def _hold(self) -> None:
        """Take the lead, run the consumers while it is held, and try again once it is lost."""
        while True:
            try:
                lead = await self.store.try_lead(self.name)
            except StoreError as error:
                log.warning("lead_unavailable", lead=self.name, error=str(error))
                lead = None
            if lead is None:
                await asyncio.sleep(self.retry)
                continue
            log.info("lead_taken", lead=self.name)
            try:
                self._start_consumers()
                await lead.lost()
                log.warning("lead_lost", lead=self.name)
            finally:
                await self._stop_consumers()
                await lead.release()

    def _start_consumers(self) -> None:
        for consumer in self.consumers:
            consumer.start()
        self.leading = True

    async def _stop_consumers(self) -> None:
        if not self.leading:
            return
        self.leading = False
        for consumer in reversed(self.consumers):
            await consumer.stop()
