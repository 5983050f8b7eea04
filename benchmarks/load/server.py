"""The server under test: `fairway serve` started on a free loopback port (rate limits off),
waited for, its connections spread over its workers, profiled, stopped; and the projector
process beside it with --projector redis."""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import os
import signal
import socket
import subprocess
import sys
import time
from collections import Counter
from pathlib import Path

from benchmarks.load.client import HOST, HttpError, RawClient
from benchmarks.load.processes import connection_owners, descendants

ROOT = Path(__file__).resolve().parents[2]


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind((HOST, 0))
        return int(sock.getsockname()[1])


NODELAY_PATCH = """\
# Written by benchmarks/api_load.py --nodelay-patch: the server's listening socket re-wrapped
# so that its proto reads IPPROTO_TCP and asyncio sets TCP_NODELAY on every accepted
# connection (uvicorn binds it with proto 0 when --workers > 1: Kludex/uvicorn#3149).
import socket

import uvicorn.config

_bind_socket = uvicorn.config.Config.bind_socket


def bind_socket(self):
    sock = _bind_socket(self)
    if sock.family in (socket.AF_INET, socket.AF_INET6):
        sock = socket.socket(fileno=sock.detach())
    return sock


uvicorn.config.Config.bind_socket = bind_socket
"""


def projection_env(args: argparse.Namespace) -> dict[str, str]:
    """--projector embedded: the default (in-memory projectors inside each worker); none and
    redis: the service reads Redis and runs none, redis adds a projector process."""
    if args.projector == "embedded":
        return {}
    return {"REDIS_URL": args.redis_url, "FAIRWAY_REDIS_PREFIX": args.redis_prefix}


def start_projector(args: argparse.Namespace, url: str) -> subprocess.Popen[str] | None:
    """With --projector redis: benchmarks/projection_lag.py, the projector timing its lag."""
    if args.projector != "redis":
        return None
    command = [
        sys.executable,
        str(ROOT / "benchmarks" / "projection_lag.py"),
        "--database-url",
        url,
        "--redis-url",
        args.redis_url,
        "--prefix",
        args.redis_prefix,
        "--skip",
        str(args.warmup),
    ]
    return subprocess.Popen(command, cwd=ROOT, stdout=subprocess.PIPE, text=True)


def stop_projector(projector: subprocess.Popen[str] | None) -> None:
    if projector is None:
        return
    projector.send_signal(signal.SIGINT)
    out, _ = projector.communicate(timeout=60)
    print(out.strip())


def start_server(
    args: argparse.Namespace, url: str, port: int, patch_dir: str | None
) -> subprocess.Popen[bytes]:
    env = os.environ | {
        "DATABASE_URL": url,
        "FAIRWAY_LOG_LEVEL": "warning",
        "FAIRWAY_RATE_LIMIT_PER_SECOND": "1e9",
        "FAIRWAY_RATE_LIMIT_BURST": "1000000000",
        "FAIRWAY_POOL_SIZE": str(args.pool_size),
        "FAIRWAY_GROUP_COMMIT": args.group_commit,
        **projection_env(args),
        "PYTHONPATH": os.pathsep.join(
            p for p in (patch_dir, args.server_path, str(ROOT), os.environ.get("PYTHONPATH")) if p
        ),
    }
    command = [
        sys.executable,
        "-m",
        "service.cli",
        "serve",
        "--host",
        HOST,
        "--port",
        str(port),
        "--workers",
        str(args.workers),
    ]
    return subprocess.Popen(
        command,
        cwd=ROOT,
        env=env,
        start_new_session=True,
        stdout=subprocess.DEVNULL if not args.verbose else None,
    )


async def wait_ready(port: int, server: subprocess.Popen[bytes], workers: int) -> None:
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        if server.poll() is not None:
            raise RuntimeError(f"fairway serve exited with {server.returncode}")
        with contextlib.suppress(OSError, HttpError):
            client = RawClient(port)
            code, _ = await client.call("GET", "/ready")
            await client.close()
            # every worker is up once the tree holds them all (supervisor + workers)
            if code == 200 and (workers == 1 or len(descendants(server.pid)) > workers):
                return
        await asyncio.sleep(0.2)
    raise RuntimeError("fairway serve did not become ready in 60 s")


def worker_pids(server: subprocess.Popen[bytes], workers: int) -> list[int]:
    """The API workers of a `fairway serve` tree (the supervisor's helpers, if any, have
    children of their own)."""
    found = [p for p in descendants(server.pid) if p != server.pid] or [server.pid]
    if workers > 1:
        found = [p for p in found if len(descendants(p)) == 1][-workers:]
    return found


def stop_server(server: subprocess.Popen[bytes]) -> None:
    if server.poll() is None:
        server.send_signal(signal.SIGINT)
        try:
            server.wait(timeout=20)
        except subprocess.TimeoutExpired:
            server.kill()
            server.wait()


async def balance(clients: list[RawClient], workers: list[int], port: int) -> dict[int, int]:
    """Reconnect bots until every worker holds its share of the connections: the workers
    share one listening socket, and whichever is idle in epoll accepts a whole burst, so a
    few dozen connections opened at once usually land on one worker (real clients arriving
    one by one spread better). Returns {worker: connections}."""
    for client in clients:
        await client.call("GET", "/health")
    fair = -(-len(clients) // len(workers))
    for _ in range(50):
        owners = connection_owners(workers, port)
        held = Counter(owners.values())
        crowded = [w for w in workers if held[w] > fair]
        if not crowded:
            break
        for client in clients:
            assert client.proto is not None
            assert client.proto.transport is not None
            local = client.proto.transport.get_extra_info("sockname")[1]
            owner = owners.get(local)
            if owner in crowded and held[owner] > fair:
                held[owner] -= 1
                await client.close()
                client.proto = None
                await client.call("GET", "/health")
        await asyncio.sleep(0.05)
    return dict(Counter(connection_owners(workers, port).values()))


class PySpy:
    """py-spy record of each server worker during the action window (optional)."""

    def __init__(self, exe: str | None, out_dir: Path, seconds: float, gil: bool = False) -> None:
        self.exe, self.out_dir, self.seconds, self.gil = exe, out_dir, seconds, gil
        self.procs: list[subprocess.Popen[bytes]] = []

    def start(self, pids: list[int]) -> None:
        if not self.exe:
            return
        self.out_dir.mkdir(parents=True, exist_ok=True)
        for pid in pids:
            out = self.out_dir / f"worker-{pid}.txt"
            self.procs.append(
                subprocess.Popen(
                    [
                        self.exe,
                        "record",
                        "--pid",
                        str(pid),
                        "--duration",
                        str(int(self.seconds)),
                        "--rate",
                        "200",
                        "--format",
                        "raw",
                        "--nonblocking",
                        *(["--gil"] if self.gil else []),
                        "-o",
                        str(out),
                    ],
                    stdout=subprocess.DEVNULL,
                    stderr=subprocess.DEVNULL,
                )
            )

    def wait(self) -> None:
        for proc in self.procs:
            proc.wait(timeout=self.seconds + 60)
