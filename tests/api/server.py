"""A real Fairway HTTP server on a free loopback port, in a thread, for the API tests."""

from __future__ import annotations

import socket
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import httpx
import uvicorn

from service.cli.serve import uvicorn_config
from service.http.app import create_app
from service.ops.settings import Settings


def instance_settings(database_url: str, data_dir: Path) -> Settings:
    """Another instance on `database_url` as a newcomer starts it: no receipt key configured
    (it makes its own in `data_dir`), quiet logs, no rate limit in the way."""
    return Settings(
        database_url=database_url,
        data_dir=data_dir,
        log_level="warning",
        log_format="json",
        rate_limit_per_second=100_000.0,
        rate_limit_burst=100_000,
        bot_think=0.0,
    )


def free_port() -> int:
    """A loopback port that no one else is handed for a while and that a server binding
    with SO_REUSEADDR (uvicorn, asyncio) may take at once; nothing listens on it meanwhile.

    A port only found free (bound to 0, closed) may go to another worker's server, or be the
    local end of someone's outgoing connection, before ours binds it. So this one is left in
    TIME_WAIT, by a connection its listening side closes first: until that ends (a minute),
    the kernel gives the port to no bind to port 0 and no connect."""
    with socket.socket() as listener:
        listener.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        listener.bind(("127.0.0.1", 0))
        listener.listen(1)
        port = int(listener.getsockname()[1])
        with socket.create_connection(("127.0.0.1", port)) as client:
            accepted, _ = listener.accept()
            accepted.close()  # this end closes first: it is the one left in TIME_WAIT
            client.recv(1)  # the close has arrived; the client's own close ends it
    return port


@contextmanager
def running_server(settings: Settings, **app_options: Any) -> Iterator[str]:
    """Serve `create_app(settings, **app_options)` with uvicorn until the block ends; yields
    the base URL."""
    port = free_port()
    config = uvicorn_config(
        create_app(settings, **app_options), settings, host="127.0.0.1", port=port, lifespan="on"
    )
    server = uvicorn.Server(config)
    thread = threading.Thread(target=server.run, name="fairway-test-server", daemon=True)
    thread.start()
    base = f"http://127.0.0.1:{port}"
    deadline = time.monotonic() + 20
    while not server.started:
        if not thread.is_alive() or time.monotonic() > deadline:
            raise RuntimeError("the test server did not start")
        time.sleep(0.02)
    try:
        httpx.get(base + "/health", timeout=5).raise_for_status()
        yield base
    finally:
        server.should_exit = True
        thread.join(timeout=20)
