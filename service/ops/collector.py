"""The garbage collector of a long-running Fairway process (`fairway serve`'s workers, the
projector, the referee, the bots).

Two settings, applied once the process has built what it lives with:

- `gc.freeze()`: everything allocated at start (modules, the app, its routes and schemas)
  lives as long as the process; frozen, the full collections no longer revisit it.
- A first-generation threshold of `FIRST` allocations instead of CPython's 700. A request
  or a page of the feed allocates thousands of short-lived containers (decoded bodies,
  events, views), nearly all freed by reference counting; at 700 the collector ran several
  times a request, scanning what was about to go anyway. Measured side by side with
  boardgame.io (docs/BENCHMARKS.md, "The collector's first threshold"): server CPU per
  action 574 -> 462 µs, 0.87x -> 1.11x boardgame.io's actions/s in the same runs. Cycles
  are still found, a few thousand allocations later.
"""

from __future__ import annotations

import gc
from typing import Final

FIRST: Final = 10_000
"""Allocations (less deallocations) of tracked objects between two young collections."""


def settle() -> None:
    """Collect once, freeze what survives, and raise the young generation's threshold."""
    gc.collect()
    gc.freeze()
    _, second, third = gc.get_threshold()
    gc.set_threshold(FIRST, second, third)
