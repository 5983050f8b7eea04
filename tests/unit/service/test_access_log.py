"""uvicorn's own access log follows the config (`access_log`), whatever handlers the logging
setup puts up the tree: the service logs each request itself (service/http/middleware.py)."""

from __future__ import annotations

import asyncio
import logging
from typing import Any

import pytest
import uvicorn
from uvicorn.server import ServerState

from service.http.connections import ConnectionLimits, GuardedProtocol
from service.ops.logging import configure_logging

pytestmark = pytest.mark.unit


async def _app(scope: Any, receive: Any, send: Any) -> None:
    raise AssertionError("never called")


def _config(access_log: bool) -> uvicorn.Config:
    config = uvicorn.Config(_app, http=GuardedProtocol, access_log=access_log)
    config.connection_limits = ConnectionLimits(  # type: ignore[attr-defined]
        header_timeout=5.0,
        max_connections=10,
        per_client=5,
        body_timeout=5.0,
        body_min_rate=1000.0,
    )
    return config


def _protocol(config: uvicorn.Config) -> GuardedProtocol:
    loop = asyncio.new_event_loop()
    try:
        return GuardedProtocol(config, ServerState(), {}, loop)
    finally:
        loop.close()


@pytest.mark.parametrize("access_log", [False, True])
def test_uvicorn_logs_each_request_only_when_its_config_says_so(access_log: bool) -> None:
    """In a worker the config comes first (uvicorn then silences its access logger), then the
    app's logging setup (create_app), which routes uvicorn's loggers to the root handler."""
    config = _config(access_log)
    configure_logging("info", "json")
    # Our root handler is up the tree: uvicorn alone would log (and format) every request.
    assert logging.getLogger("uvicorn.access").hasHandlers()
    assert _protocol(config).access_log is access_log
