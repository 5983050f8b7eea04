"""An error that repeats is written once per interval, with the count of repeats held back."""

from __future__ import annotations

import logging

import pytest

from service.ops.logging import RepeatFilter, Repeats, bound_repeated_errors

pytestmark = pytest.mark.unit


class Clock:
    def __init__(self) -> None:
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now


class Kept(logging.Handler):
    def __init__(self) -> None:
        super().__init__()
        self.messages: list[str] = []

    def emit(self, record: logging.LogRecord) -> None:
        self.messages.append(record.getMessage())


@pytest.fixture
def clock() -> Clock:
    return Clock()


@pytest.fixture
def kept(clock: Clock) -> Kept:
    logger = logging.getLogger("fairway.test.repeats")
    logger.propagate = False
    logger.handlers[:] = [handler := Kept()]
    logger.filters[:] = [RepeatFilter(Repeats(interval=10.0, clock=clock))]
    return handler


def test_the_first_occurrence_passes_and_repeats_within_the_interval_are_counted(
    clock: Clock,
) -> None:
    repeats = Repeats(interval=10.0, clock=clock)
    assert repeats.admit("accept failed") == 0
    for _ in range(2047):
        clock.now += 0.001
        assert repeats.admit("accept failed") is None
    assert repeats.admit("another error") == 0
    clock.now += 10.0
    assert repeats.admit("accept failed") == 2047
    assert repeats.admit("accept failed") is None


def test_a_flood_of_one_error_writes_one_line_per_interval_with_the_count(
    clock: Clock, kept: Kept
) -> None:
    logger = logging.getLogger("fairway.test.repeats")
    for second in range(25):
        for _ in range(2048):
            logger.error("socket.accept() out of system resource\nsocket: <fd=%d>", 6)
        clock.now += 1.0
        assert len(kept.messages) == second // 10 + 1
    assert kept.messages[0] == "socket.accept() out of system resource\nsocket: <fd=6>"
    assert kept.messages[1].endswith("[20479 repeats held back in the last 10 s]")
    assert kept.messages[2].endswith("[20479 repeats held back in the last 10 s]")


def test_errors_told_apart_by_their_first_line_and_info_never_held(
    clock: Clock, kept: Kept
) -> None:
    logger = logging.getLogger("fairway.test.repeats")
    logger.setLevel(logging.INFO)
    for _ in range(3):
        logger.error("accept failed: Too many open files")
        logger.warning("Invalid HTTP request received.")
        logger.info("started")
    assert kept.messages == [
        "accept failed: Too many open files",
        "Invalid HTTP request received.",
        "started",
        "started",
        "started",
    ]


def test_the_filter_sits_once_on_asyncio_and_uvicorn_loggers() -> None:
    bound_repeated_errors()
    bound_repeated_errors()
    for name in ("asyncio", "uvicorn.error"):
        filters = logging.getLogger(name).filters
        assert sum(isinstance(f, RepeatFilter) for f in filters) == 1
