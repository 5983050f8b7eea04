"""The one logger setup: JSON when not on a terminal, console when on one.

An error that repeats (an accept loop out of descriptors, a flood of malformed requests) is
written once per interval with a count of the repeats it held back, never once per occurrence.
"""

from __future__ import annotations

import logging
import sys
import threading
import time
from collections.abc import Callable

import structlog

REPEAT_INTERVAL = 10.0
"""Seconds during which a repeated warning or error is counted instead of written."""

# The stdlib loggers that write per occurrence: asyncio's accept loop ("socket.accept() out of
# system resource", about 2,000 times a second once descriptors run out) and uvicorn's.
_NOISY_LOGGERS = ("asyncio", "uvicorn.error")


class Repeats:
    """Lets the first occurrence of each key through per interval and counts the rest.

    `admit(key)` answers None to hold an occurrence back, or the number held back since the
    last one it let through.
    """

    def __init__(
        self, interval: float = REPEAT_INTERVAL, clock: Callable[[], float] = time.monotonic
    ) -> None:
        self.interval = interval
        self._clock = clock
        self._lock = threading.Lock()
        self._windows: dict[object, tuple[float, int]] = {}

    def admit(self, key: object) -> int | None:
        now = self._clock()
        with self._lock:
            opened, held = self._windows.get(key, (now - self.interval, 0))
            if now - opened < self.interval:
                self._windows[key] = (opened, held + 1)
                return None
            self._windows[key] = (now, 0)
            return held


class RepeatFilter(logging.Filter):
    """A stdlib filter: warnings and errors with the same first line are bounded by `Repeats`;
    the record let through after a quiet spell says how many it stood for."""

    def __init__(self, repeats: Repeats | None = None) -> None:
        super().__init__()
        self.repeats = repeats or Repeats()

    def filter(self, record: logging.LogRecord) -> bool:
        if record.levelno < logging.WARNING:
            return True
        first_line = record.getMessage().partition("\n")[0]
        held = self.repeats.admit((record.name, record.levelno, first_line))
        if held is None:
            return False
        if held:
            note = f" [{held} repeats held back in the last {self.repeats.interval:g} s]"
            record.msg, record.args = record.getMessage() + note, None
        return True


def bound_repeated_errors(interval: float = REPEAT_INTERVAL) -> None:
    """Put a `RepeatFilter` on the stdlib loggers that repeat themselves (once each)."""
    for name in _NOISY_LOGGERS:
        logger = logging.getLogger(name)
        if not any(isinstance(f, RepeatFilter) for f in logger.filters):
            logger.addFilter(RepeatFilter(Repeats(interval)))


def configure_logging(level: str = "info", fmt: str = "auto") -> None:
    use_console = fmt == "console" or (fmt == "auto" and sys.stderr.isatty())
    renderer: structlog.types.Processor = (
        structlog.dev.ConsoleRenderer() if use_console else structlog.processors.JSONRenderer()
    )
    structlog.configure(
        processors=[
            structlog.contextvars.merge_contextvars,
            structlog.processors.add_log_level,
            structlog.processors.TimeStamper(fmt="iso", utc=True),
            structlog.processors.StackInfoRenderer(),
            structlog.processors.format_exc_info,
            renderer,
        ],
        wrapper_class=structlog.make_filtering_bound_logger(
            logging.getLevelNamesMapping().get(level.upper(), logging.INFO)
        ),
        logger_factory=structlog.PrintLoggerFactory(sys.stderr),
        cache_logger_on_first_use=True,
    )
    bound_repeated_errors()


log = structlog.get_logger("fairway")
