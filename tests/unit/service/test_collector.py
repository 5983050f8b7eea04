"""A long-running process settles its garbage collector once it has started
(service/ops/collector.py): what start-up built is frozen, and the young generation is
collected every `FIRST` allocations instead of CPython's 700."""

from __future__ import annotations

import gc
from collections.abc import Iterator
from pathlib import Path

import pytest

from service.ops import collector


@pytest.fixture
def collector_restored() -> Iterator[tuple[int, int, int]]:
    before = gc.get_threshold()
    gc.unfreeze()
    yield before
    gc.unfreeze()
    gc.set_threshold(*before)


def test_settling_freezes_what_start_up_built_and_raises_the_young_threshold(
    collector_restored: tuple[int, int, int],
) -> None:
    built_at_start = [[n] for n in range(1000)]  # tracked containers that outlive start-up
    collector.settle()
    assert gc.get_freeze_count() >= len(built_at_start)
    assert gc.get_threshold() == (collector.FIRST, *collector_restored[1:])


def test_each_serving_worker_settles_its_collector(
    collector_restored: tuple[int, int, int],
    monkeypatch: pytest.MonkeyPatch,
    tmp_path: Path,
) -> None:
    """`fairway serve` hands uvicorn `create_app_from_env`, once per worker process."""
    from service.http.app import create_app_from_env

    for name in ("DATABASE_URL", "REDIS_URL", "FAIRWAY_FEED_DATABASE_URL"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("FAIRWAY_DATA_DIR", str(tmp_path))
    assert gc.get_threshold()[0] != collector.FIRST
    create_app_from_env()
    assert gc.get_threshold()[0] == collector.FIRST
    assert gc.get_freeze_count() > 0
