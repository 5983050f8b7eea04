"""Capturing a module's structlog lines in a test.

The service configures structlog to cache a logger on its first use, and a cached logger
keeps the list of processors configured then. Every app a test starts configures logging
again with a new list, and `structlog.testing.capture_logs` edits only the newest: alone, it
sees nothing from a module whose logger was first used before the last app start on the same
worker. `captured_logs` gives the module a fresh logger for the capture's length, so what a
test sees does not depend on which tests ran before it."""

from __future__ import annotations

import contextlib
from collections.abc import Iterator
from types import ModuleType
from typing import Any

import pytest
import structlog


@contextlib.contextmanager
def captured_logs(
    monkeypatch: pytest.MonkeyPatch, module: ModuleType, logger_name: str
) -> Iterator[list[dict[str, Any]]]:
    """The lines written inside the block through `module.log`, the module's logger named
    `logger_name`."""
    with structlog.testing.capture_logs() as logs, monkeypatch.context() as patch:
        patch.setattr(module, "log", structlog.get_logger(logger_name))
        yield logs
