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
from typing import TextIO

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


class _StructlogHandler(logging.StreamHandler[TextIO]):
    """The root logger's handler: stdlib records rendered like structlog's own lines."""


def configure_logging(level: str = "info", fmt: str = "auto") -> None:
    """structlog's lines and the stdlib's (the store, psycopg, uvicorn, asyncio) alike: one
    JSON object per line on stderr, or console lines on a terminal (`fmt` `auto`)."""
    use_console = fmt == "console" or (fmt == "auto" and sys.stderr.isatty())
    threshold = logging.getLevelNamesMapping().get(level.upper(), logging.INFO)
    shared: list[structlog.types.Processor] = [
        structlog.contextvars.merge_contextvars,
        structlog.processors.add_log_level,
        structlog.processors.TimeStamper(fmt="iso", utc=True),
    ]
    # The console renderer lays out exceptions itself; JSON needs them as text first.
    rendering: list[structlog.types.Processor] = (
        [structlog.processors.StackInfoRenderer(), structlog.dev.ConsoleRenderer()]
        if use_console
        else [
            structlog.processors.StackInfoRenderer(),
            structlog.processors.format_exc_info,
            structlog.processors.JSONRenderer(),
        ]
    )
    structlog.configure(
        processors=[*shared, _named_fairway, *rendering],
        wrapper_class=structlog.make_filtering_bound_logger(threshold),
        logger_factory=structlog.PrintLoggerFactory(sys.stderr),
        cache_logger_on_first_use=True,
    )
    _route_stdlib_logging(
        threshold,
        structlog.stdlib.ProcessorFormatter(
            foreign_pre_chain=[*shared, structlog.stdlib.add_logger_name],
            processors=[structlog.stdlib.ProcessorFormatter.remove_processors_meta, *rendering],
        ),
    )
    bound_repeated_errors()


def _named_fairway(
    _: object, __: str, event_dict: structlog.types.EventDict
) -> structlog.types.EventDict:
    """structlog's own lines are the service's; a stdlib line names its logger."""
    event_dict.setdefault("logger", "fairway")
    return event_dict


def _route_stdlib_logging(threshold: int, formatter: logging.Formatter) -> None:
    """One handler on the root logger, replacing ours from an earlier call and uvicorn's own
    (its loggers then propagate to the root like every other library's)."""
    root = logging.getLogger()
    for handler in [h for h in root.handlers if isinstance(h, _StructlogHandler)]:
        root.removeHandler(handler)
    handler = _StructlogHandler(sys.stderr)
    handler.setFormatter(formatter)
    root.addHandler(handler)
    root.setLevel(threshold)
    for name in ("uvicorn", "uvicorn.error", "uvicorn.access"):
        logger = logging.getLogger(name)
        for own in list(logger.handlers):
            logger.removeHandler(own)
        logger.propagate = True


log = structlog.get_logger("fairway")
