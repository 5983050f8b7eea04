"""Capturing a module's structlog lines in a test.

The service configures structlog to cache a logger on its first use, and a cached logger
keeps the list of processors configured then. Every app a test starts configures logging
again with a new list (in the test's own process: its server runs in a thread), and
`structlog.testing.capture_logs` edits only the newest: alone, it sees nothing from a module
whose logger was bound before the last configuration, and under load an app of another test
still starting or stopping can configure logging again in the middle of a capture (the
replica test once saw no line at all while every projection said it was waiting).

`captured_logs` does not depend on the configuration for the module it names: it puts a
recorder in the place of the module's logger for the capture's length, which writes each
line as `capture_logs` would (`event`, `log_level`, the fields) into the list it yields.
Lines of other modules still come through `capture_logs`, as before."""

from __future__ import annotations

import contextlib
from collections.abc import Iterator
from types import ModuleType
from typing import Any

import pytest
import structlog

LEVELS = {"debug", "info", "warning", "error", "critical"}


class Recorder:
    """Stands in for a structlog logger: each call adds a line to `lines`."""

    def __init__(self, lines: list[dict[str, Any]], bound: dict[str, Any] | None = None) -> None:
        self._lines = lines
        self._bound = bound or {}

    def bind(self, **fields: Any) -> Recorder:
        return Recorder(self._lines, {**self._bound, **fields})

    def exception(self, event: str, **fields: Any) -> None:
        self._write("error", event, {"exc_info": True, **fields})

    def __getattr__(self, level: str) -> Any:
        if level == "warn":
            level = "warning"
        if level not in LEVELS:
            raise AttributeError(level)
        return lambda event, **fields: self._write(level, event, fields)

    def _write(self, level: str, event: str, fields: dict[str, Any]) -> None:
        self._lines.append({**self._bound, **fields, "event": event, "log_level": level})


@contextlib.contextmanager
def captured_logs(
    monkeypatch: pytest.MonkeyPatch, module: ModuleType
) -> Iterator[list[dict[str, Any]]]:
    """The lines written inside the block through `module.log`, and those of other modules
    that `capture_logs` catches."""
    assert hasattr(module, "log"), f"{module.__name__} has no module logger `log`"
    with structlog.testing.capture_logs() as logs, monkeypatch.context() as patch:
        patch.setattr(module, "log", Recorder(logs))
        yield logs
