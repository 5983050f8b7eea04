"""The lead of an installation: held by one process at a time, so that what is wasted work
when done twice (the feed's consumers: the referee, the bots, the round keeper) runs once per
deployment (service/ops/leader.py). Nothing correct rests on it: the expected version still
decides every append.

`Lead` is what the embedded store gives: it is one process's, so that process always leads.
On PostgreSQL it is a session advisory lock on a connection of its own
(events/store/postgres_lead.py), held until that connection ends."""

from __future__ import annotations

import asyncio


class Lead:
    """A lead held; the embedded store's is never lost."""

    async def lost(self) -> None:
        """Return once the lead is no longer held (never, here)."""
        await asyncio.Event().wait()

    async def release(self) -> None:
        """Give the lead up (nothing, here)."""
