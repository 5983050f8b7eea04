"""A real Fairway HTTP server on a free loopback port for the API tests: `fairway serve` in a
process of its own (`serving_process`), or the app in a thread of the test's process
(`running_server`) for the tests that hand the app options no environment variable carries
(a clock) or that set up a server of their own for one test."""

from __future__ import annotations

import os
import signal
import socket
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import httpx
import msgspec
import uvicorn

from service.cli.serve import uvicorn_config
from service.http.app import create_app
from service.ops.metrics import MULTIPROCESS
from service.ops.settings import Settings
from tests.support.children import dies_with_us
from tests.support.settings_env import to_env

ROOT = Path(__file__).resolve().parents[2]
CONFIGURATION = ("DATABASE_URL", "REDIS_URL", MULTIPROCESS)
"""Variables the service reads besides FAIRWAY_*."""
STARTUP = 120.0
"""Seconds a new interpreter has to import the service and answer /health: a few alone,
far more on a machine busy with other tests."""
STOP_MARGIN = 30.0
"""Seconds past the shutdown grace for the process to exit after SIGTERM before it is killed."""


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


@contextmanager
def serving_process(settings: Settings, log_dir: Path) -> Iterator[str]:
    """`fairway serve`, one worker, in a process of its own configured by the environment
    alone (`to_env`), as it runs in production, until the block ends; yields the base URL.

    Its stdout and stderr go to a file in `log_dir` (a pipe nobody reads could fill up and
    stall it), whose contents a failure to start, or an exit before the block ends, shows.
    The end of the block stops it as an orchestrator does: SIGTERM, then a kill if it has
    not exited once its shutdown grace and a margin are over."""
    port = free_port()
    served = msgspec.structs.replace(settings, host="127.0.0.1", port=port, workers=1)
    # nothing of this process's own configuration reaches it, only `settings`
    inherited = {
        name: value
        for name, value in os.environ.items()
        if not name.startswith("FAIRWAY_") and name not in CONFIGURATION
    }
    log = log_dir / f"fairway-serve-{port}.log"
    with log.open("wb") as output:
        process = subprocess.Popen(
            [sys.executable, "-m", "service.cli", "serve"],
            cwd=ROOT,
            env=inherited | to_env(served),
            preexec_fn=dies_with_us(),
            stdout=output,
            stderr=subprocess.STDOUT,
        )
    base = f"http://127.0.0.1:{port}"
    try:
        deadline = time.monotonic() + STARTUP
        while not _healthy(base):
            if process.poll() is not None:
                raise RuntimeError(
                    f"fairway serve exited ({process.returncode}) before it answered:\n"
                    + log.read_text(errors="replace")
                )
            if time.monotonic() > deadline:
                raise RuntimeError(
                    f"fairway serve did not answer /health within {STARTUP:.0f} s:\n"
                    + log.read_text(errors="replace")
                )
            time.sleep(0.1)
        yield base
        if process.poll() is not None:
            raise RuntimeError(
                f"fairway serve exited ({process.returncode}) while the tests used it:\n"
                + log.read_text(errors="replace")
            )
    finally:
        if process.poll() is None:
            process.send_signal(signal.SIGTERM)
            try:
                process.wait(timeout=settings.shutdown_grace + STOP_MARGIN)
            except subprocess.TimeoutExpired:
                process.kill()
                process.wait()


def _healthy(base: str) -> bool:
    try:
        return httpx.get(base + "/health", timeout=1).status_code == 200
    except httpx.TransportError:
        return False
