"""`fairway serve`: uvicorn running the app, on the embedded store unless DATABASE_URL is set."""

from __future__ import annotations

import os
import shutil
import socket
import sys
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

import uvicorn
from uvicorn.supervisors import Multiprocess

from service.http.connections import (
    ConnectionLimits,
    GuardedProtocol,
    client_share,
    connection_cap,
    raise_descriptor_limit,
)
from service.http.middleware import ClientAddresses
from service.ops.metrics import MULTIPROCESS
from service.ops.settings import Settings, SettingsError


class _Config(uvicorn.Config):
    """uvicorn's config, with the connection limits its protocol reads and a listening socket
    that knows it is TCP.

    With several workers uvicorn binds the socket itself with protocol number 0, and asyncio
    sets TCP_NODELAY only on accepted sockets whose protocol is IPPROTO_TCP; Nagle's
    algorithm then holds every response until the client's delayed ACK, about 44 ms
    (measured; docs/BENCHMARKS.md). Re-wrapping the same descriptor lets the kernel report
    the real protocol.
    """

    def __init__(self, app: Any, limits: ConnectionLimits, **options: Any) -> None:
        super().__init__(app, http=GuardedProtocol, **options)
        self.connection_limits = limits

    def bind_socket(self) -> socket.socket:
        sock = super().bind_socket()
        if sock.family in (socket.AF_INET, socket.AF_INET6):
            return socket.socket(fileno=sock.detach())
        return sock


class _Workers(Multiprocess):
    """uvicorn's supervisor of several workers, which also lets go of the listening socket
    when it stops them: each worker closes its own copy as it stops, and until the last copy
    is closed the kernel would go on queueing new connections that no one will accept, in
    place of refusing them (a load balancer then tries another instance at once)."""

    def terminate_all(self) -> None:
        for sock in self.sockets:
            sock.close()
        super().terminate_all()


def uvicorn_config(app: Any, settings: Settings, **options: Any) -> uvicorn.Config:
    """The one uvicorn configuration, for `fairway serve` and the API tests alike.

    `app` is the app or its import string; `options` are uvicorn's (host, port, workers...).
    Raises the descriptor limit first, so that the connection cap fits under it.
    """
    cap = connection_cap(settings.max_connections, raise_descriptor_limit(), settings.pool_size)
    limits = ConnectionLimits(
        header_timeout=settings.header_timeout,
        max_connections=cap,
        per_client=client_share(settings.max_connections_per_client, cap),
        body_timeout=settings.body_timeout,
        body_min_rate=settings.body_min_rate,
        clients=ClientAddresses(settings.trusted_proxies),
    )
    defaults = {
        "timeout_keep_alive": settings.keep_alive_timeout,
        "log_level": "warning",
        "access_log": False,
        # The app names the client itself (FAIRWAY_TRUSTED_PROXIES, service/http/middleware.py);
        # uvicorn would otherwise believe X-Forwarded-For from any loopback peer, and each
        # request could pick its own rate-limit bucket (tests/api/test_api_hostile.py).
        "proxy_headers": False,
        # SIGTERM: stop listening, end the event streams with a reconnect hint
        # (service/http/connections.py), give the requests in flight this long.
        "timeout_graceful_shutdown": settings.shutdown_grace,
    }
    return _Config(app, limits, **(defaults | options))


@contextmanager
def shared_metrics() -> Iterator[None]:
    """A fresh directory where the workers (spawned after this, inheriting the variable)
    keep their metrics for one another; removed when they have stopped."""
    try:
        directory = tempfile.mkdtemp(prefix="fairway-metrics-")
    except OSError as error:
        raise SettingsError(
            "TMPDIR",
            f"(or /tmp) cannot hold the workers' shared metrics ({error.strerror or error}): "
            "give the workers a writable temporary directory, or run one worker",
        ) from None
    os.environ[MULTIPROCESS] = directory
    print(f"fairway: the workers add up their metrics in {directory} (removed at exit)")
    try:
        yield
    finally:
        del os.environ[MULTIPROCESS]
        shutil.rmtree(directory, ignore_errors=True)


def refuse_what_cannot_be_honoured(settings: Settings, workers: int, workers_from: str) -> None:
    """Settings each valid alone that this process cannot honour together: a `SettingsError`
    (one line on stderr, exit 2) rather than a service that quietly does something else."""
    if workers > 1 and not settings.database_url:
        raise SettingsError(
            workers_from,
            f"is {workers}, but the embedded store is one process's: set DATABASE_URL "
            "(PostgreSQL) for several workers, or run one",
        )
    if settings.database_url and settings.receipt_key is not None:
        return  # nothing is written to the data directory
    needs = (
        "the embedded store keeps its file there"
        if not settings.database_url
        else "the receipt key is kept there unless FAIRWAY_RECEIPT_KEY is set"
    )
    try:
        settings.data_dir.mkdir(parents=True, exist_ok=True)
        writable = os.access(settings.data_dir, os.W_OK | os.X_OK)
    except OSError as error:
        raise SettingsError(
            "FAIRWAY_DATA_DIR",
            f"cannot be made ({error.strerror}), and {needs}: {str(settings.data_dir)!r}",
        ) from None
    if not writable:
        raise SettingsError(
            "FAIRWAY_DATA_DIR",
            f"is not writable, and {needs}: {str(settings.data_dir)!r}",
        )


def serve(host: str | None = None, port: int | None = None, workers: int | None = None) -> int:
    settings = Settings.from_env()
    host = host or settings.host
    port = port or settings.port
    flag, workers = workers is not None, workers or settings.workers
    refuse_what_cannot_be_honoured(settings, workers, "--workers" if flag else "FAIRWAY_WORKERS")
    if not settings.database_url:
        print(
            f"fairway: embedded event store in {settings.data_dir.resolve()} "
            "(set DATABASE_URL for PostgreSQL)"
        )
    print(f"fairway: serving on http://{host}:{port}  (OpenAPI: /schema/openapi.json)")
    config = uvicorn_config(
        "service.http.app:create_app_from_env",
        settings,
        factory=True,
        host=host,
        port=port,
        workers=workers,
    )
    server = uvicorn.Server(config)
    # The workers name the instance alike in /metrics (service/ops/metrics.py).
    os.environ["FAIRWAY_INSTANCE"] = settings.instance or f"{socket.gethostname()}:{os.getpid()}"
    try:
        if workers > 1:
            with shared_metrics():
                _Workers(config, sockets=[config.bind_socket()]).run()
        else:
            server.run()
    except KeyboardInterrupt:
        pass
    if workers == 1 and not server.started:
        print("fairway serve: the server did not start", file=sys.stderr)
        return 3
    return 0
