"""A real Redis Cluster of the test's own: three masters on loopback ports, no replicas, no
persistence, in a temporary directory; stopped, and their files gone, when the test ends.

Started as an operator would: `redis-server --cluster-enabled yes` on each port, joined by
`redis-cli --cluster create`, and used once every node's `CLUSTER INFO` says
`cluster_state:ok` (all 16384 slots served, and every node agreeing on it).
"""

from __future__ import annotations

import contextlib
import socket
import subprocess
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path

from tests.api.server import free_port
from tests.support.children import dies_with_us

MASTERS = 3
START_WITHIN = 60.0
"""Seconds a node has to answer and the cluster to agree: a bound for a broken machine, far
above what a cluster takes (under a second); never the subject of an assertion."""


@dataclass(frozen=True)
class RedisCluster:
    ports: tuple[int, ...]

    @property
    def url(self) -> str:
        """The cluster's URL for Fairway (projections/redis_client.py): any one node."""
        return f"redis+cluster://127.0.0.1:{self.ports[0]}"

    def node_url(self, port: int) -> str:
        """One node alone, as a plain client sees it (to count the keys it holds)."""
        return f"redis://127.0.0.1:{port}/0"


def _bindable(port: int) -> bool:
    with socket.socket() as probe:
        probe.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        try:
            probe.bind(("127.0.0.1", port))
        except OSError:
            return False
    return True


def _node_port() -> int:
    """A free port whose cluster bus port (the port + 10000) is free too."""
    while True:
        port = free_port()
        if port + 10000 < 65536 and _bindable(port + 10000):
            return port


def _cli(port: int, *args: str) -> str:
    done = subprocess.run(
        ["redis-cli", "-h", "127.0.0.1", "-p", str(port), *args],
        capture_output=True,
        text=True,
        timeout=START_WITHIN,
        check=False,
    )
    return done.stdout


def _until(condition: Callable[[], bool], what: str) -> None:
    deadline = time.monotonic() + START_WITHIN
    while not condition():
        if time.monotonic() > deadline:
            raise RuntimeError(f"the Redis Cluster did not start: {what}")
        time.sleep(0.05)


def _server_command(directory: Path, port: int) -> list[str]:
    """One master: cluster mode, its node file in `directory`, nothing saved to disk."""
    return [
        "redis-server",
        "--bind", "127.0.0.1",
        "--port", str(port),
        "--cluster-enabled", "yes",
        "--cluster-config-file", str(directory / f"nodes-{port}.conf"),
        "--dir", str(directory),
        "--save", "",
        "--appendonly", "no",
        "--daemonize", "no",
    ]  # fmt: skip


@contextlib.contextmanager
def redis_cluster(directory: Path) -> Iterator[RedisCluster]:
    """Three masters sharing the 16384 slots, ready; stopped on leaving."""
    ports = tuple(_node_port() for _ in range(MASTERS))
    servers: list[subprocess.Popen[bytes]] = []
    try:
        for port in ports:
            servers.append(
                subprocess.Popen(
                    _server_command(directory, port),
                    preexec_fn=dies_with_us(),
                    stdout=subprocess.DEVNULL,
                    stderr=subprocess.DEVNULL,
                )
            )
        for port in ports:
            _until(lambda port=port: _cli(port, "ping").strip() == "PONG", f"{port} answers")
        nodes = [f"127.0.0.1:{port}" for port in ports]
        create = ["redis-cli", "--cluster", "create", *nodes, "--cluster-replicas", "0"]
        created = subprocess.run(
            [*create, "--cluster-yes"],
            capture_output=True,
            text=True,
            timeout=START_WITHIN,
            check=False,
        )
        if created.returncode != 0:
            raise RuntimeError(f"redis-cli --cluster create failed: {created.stdout[-2000:]}")
        for port in ports:
            _until(
                lambda port=port: "cluster_state:ok" in _cli(port, "cluster", "info"),
                f"{port} says cluster_state:ok",
            )
        yield RedisCluster(ports)
    finally:
        for server in servers:
            server.terminate()
        for server in servers:
            try:
                server.wait(timeout=START_WITHIN)
            except subprocess.TimeoutExpired:
                server.kill()
                server.wait()
