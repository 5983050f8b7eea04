"""When each bot sends: as fast as answers come (closed loop), or at fixed times (open
loop), with the latency counted from the scheduled time."""

from __future__ import annotations

import asyncio
import random
import time


class Pace:
    """Open loop: `rate` requests a second in all, each bot at its own fixed times. A bot that
    falls behind sends at once, and the latency it records counts from the scheduled time
    (no coordinated omission). rate 0: closed loop, each bot as fast as answers come."""

    def __init__(self, rate: float, bots: int, rng: random.Random) -> None:
        self.interval = bots / rate if rate else 0.0
        self.next_at = time.monotonic() + rng.random() * self.interval

    async def wait(self) -> float:
        """Sleep until the next scheduled send; returns how late it is (s)."""
        if not self.interval:
            return 0.0
        due, self.next_at = self.next_at, self.next_at + self.interval
        now = time.monotonic()
        if due > now:
            await asyncio.sleep(due - now)
            return 0.0
        return now - due
