"""The fault run's own services and processes: a throw-away PostgreSQL cluster (initdb on a
free loopback port; run as `postgres` through `runuser` when root, since PostgreSQL refuses
root), a redis-server on a free port, and the Fairway processes (`fairway serve`,
`projector`, `referee`, `bots`), each in a process group of its own so that a kill -9
reaches all of it. The system PostgreSQL (5432) and Redis (6379) are never touched.

Every wait is bounded (`WITHIN`), and `System.close()` ends every process it started and
removes its directory, whatever state the run left them in.
"""

from __future__ import annotations

import base64
import contextlib
import os
import secrets
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

import httpx
import psycopg
import redis

from events.migrate import migrate
from tests.support.pg_replica import bindir
from tests.support.tcp_proxy import TcpProxy

WITHIN = 45.0
"""Seconds one step may take (a server starting or stopping): a bound for a broken machine."""
DATABASE = "fairway"
HBA = "local all all trust\nhost all all 127.0.0.1/32 trust\n"
FAIRWAY = str(Path(sys.executable).with_name("fairway"))


def free_port() -> int:
    import socket

    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def until(condition: Callable[[], bool], what: str, within: float = WITHIN) -> None:
    deadline = time.monotonic() + within
    while not condition():
        if time.monotonic() > deadline:
            raise RuntimeError(f"gave up after {within:g} s waiting until {what}")
        time.sleep(0.1)


class Postgres:
    """One throw-away cluster: `make()`, `crash()` (pg_ctl stop -m immediate), `start()`."""

    def __init__(self, root: Path) -> None:
        self.root, self.data, self.port = root, root / "pg", free_port()
        self.bin = bindir()
        self.prefix = ["runuser", "-u", "postgres", "--"] if os.geteuid() == 0 else []
        self.running = False

    def url(self, database: str = DATABASE) -> str:
        return f"postgresql://postgres@127.0.0.1:{self.port}/{database}"

    def _run(self, tool: str, *args: str) -> None:
        command = [*self.prefix, str(self.bin / tool), *args]
        done = subprocess.run(command, capture_output=True, text=True, timeout=WITHIN + 15)
        if done.returncode != 0:
            raise RuntimeError(f"{tool} failed ({done.returncode}): {done.stderr[-1500:]}")

    def make(self) -> None:
        if self.prefix:
            shutil.chown(self.root, "postgres", "postgres")
        self._run("initdb", "-D", str(self.data), "-U", "postgres", "--auth=trust", "-E", "UTF8",
                  "--no-sync", "--no-instructions")  # fmt: skip
        (self.data / "pg_hba.conf").write_text(HBA)
        self.start()
        with psycopg.connect(self.url("postgres"), autocommit=True) as conn:
            conn.execute(f"CREATE DATABASE {DATABASE}")
        migrate(self.url())

    def start(self) -> None:
        options = (
            f"-c port={self.port} -c listen_addresses=127.0.0.1 "
            f"-c unix_socket_directories={self.root} -c max_connections=150 "
            "-c shared_buffers=64MB -c fsync=on -c synchronous_commit=on"
        )
        self._run("pg_ctl", "start", "-D", str(self.data), "-l", str(self.root / "pg.log"),
                  "-w", "-t", str(int(WITHIN)), "-o", options)  # fmt: skip
        self.running = True

    def crash(self) -> None:
        """A crash: every backend ends at once, nothing is flushed; recovery replays WAL."""
        self.running = False
        self._run("pg_ctl", "stop", "-D", str(self.data), "-m", "immediate", "-w")

    def close(self) -> None:
        if self.running:
            with contextlib.suppress(RuntimeError, subprocess.SubprocessError):
                self.crash()


class Redis:
    """A redis-server of the run's own, appending to its log (kill -9 keeps what it wrote)."""

    def __init__(self, root: Path) -> None:
        self.root, self.port = root, free_port()
        self.process: subprocess.Popen[bytes] | None = None
        self.url = f"redis://127.0.0.1:{self.port}/0"

    def start(self) -> None:
        binary = shutil.which("redis-server")
        if binary is None:
            raise RuntimeError("redis-server is not installed (Debian: redis-server)")
        (self.root / "redis").mkdir(exist_ok=True)
        self.process = subprocess.Popen(
            [binary, "--port", str(self.port), "--bind", "127.0.0.1", "--save", "",
             "--appendonly", "yes", "--dir", str(self.root / "redis"), "--protected-mode", "no"],
            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, start_new_session=True,
        )  # fmt: skip
        until(self.answers, f"redis-server answers on {self.port}")

    def answers(self) -> bool:
        client = redis.Redis.from_url(self.url, socket_connect_timeout=1, socket_timeout=2)
        try:
            return bool(client.ping())
        except (redis.RedisError, OSError):
            return False
        finally:
            client.close()

    def kill(self) -> None:
        if self.process is not None:
            with contextlib.suppress(ProcessLookupError):
                os.killpg(self.process.pid, signal.SIGKILL)
            self.process.wait(WITHIN)
            self.process = None

    def flush(self) -> None:
        client = redis.Redis.from_url(self.url, socket_timeout=10)
        try:
            client.flushall()
        finally:
            client.close()


class Proc:
    """One Fairway process (`fairway ARGS`), its own process group, its log in the run's
    directory."""

    def __init__(self, name: str, args: list[str], env: dict[str, str], logs: Path) -> None:
        self.name, self.args, self.env, self.logs = name, args, env, logs
        self.process: subprocess.Popen[bytes] | None = None
        self.starts = 0

    def start(self) -> None:
        self.starts += 1
        log = open(self.logs / f"{self.name}.{self.starts}.log", "wb")  # noqa: SIM115
        try:
            self.process = subprocess.Popen(
                [FAIRWAY, *self.args], env=self.env, stdout=log, stderr=subprocess.STDOUT,
                start_new_session=True,
            )  # fmt: skip
        finally:
            log.close()

    def kill(self, signum: int = signal.SIGKILL) -> None:
        if self.process is None:
            return
        with contextlib.suppress(ProcessLookupError):
            os.killpg(self.process.pid, signum)
        try:
            self.process.wait(WITHIN)
        except subprocess.TimeoutExpired:
            with contextlib.suppress(ProcessLookupError):
                os.killpg(self.process.pid, signal.SIGKILL)
            self.process.wait(WITHIN)
        self.process = None

    def exited(self) -> int | None:
        return None if self.process is None else self.process.poll()


class System:
    """PostgreSQL (reached through a TCP proxy the run controls), Redis, three API
    instances, two projectors, the referee and the bots."""

    def __init__(self, apis: int = 3, projectors: int = 2) -> None:
        self.root = Path(tempfile.mkdtemp(prefix="fairway-fault-"))
        self.root.chmod(0o755)
        self.logs = self.root / "logs"
        self.logs.mkdir()
        self.pg = Postgres(self.root)
        self.redis = Redis(self.root)
        self.proxy_context: contextlib.AbstractContextManager[TcpProxy] | None = None
        self.proxy: TcpProxy | None = None
        self.api_ports = [free_port() for _ in range(apis)]
        self.receipt_key = base64.b64encode(secrets.token_bytes(32)).decode()
        self.apis: list[Proc] = []
        self.projectors: list[Proc] = []
        self.referee: Proc | None = None
        self.bots: Proc | None = None
        self.projector_count = projectors

    @property
    def bases(self) -> list[str]:
        return [f"http://127.0.0.1:{port}" for port in self.api_ports]

    def env(self, name: str) -> dict[str, str]:
        assert self.proxy is not None
        return {
            "PATH": os.environ.get("PATH", "/usr/bin:/bin"),
            "HOME": str(self.root),
            "DATABASE_URL": self.proxy.url,
            "REDIS_URL": self.redis.url,
            "FAIRWAY_REDIS_PREFIX": "fw",
            "FAIRWAY_RECEIPT_KEY": self.receipt_key,
            "FAIRWAY_DATA_DIR": str(self.root / "data"),
            "FAIRWAY_INSTANCE": name,
            "FAIRWAY_PROJECTOR_INLINE": "off",
            "FAIRWAY_REFEREE": "off",
            "FAIRWAY_BOTS": "off",
            "FAIRWAY_BOT_THINK": "0.05",
            "FAIRWAY_POOL_SIZE": "8",
            "FAIRWAY_DB_TIMEOUT": "5",
            "FAIRWAY_SSE_LIFETIME": "6",
            "FAIRWAY_SHUTDOWN_GRACE": "3",
            "FAIRWAY_RATE_LIMIT_PER_SECOND": "100000",
            "FAIRWAY_RATE_LIMIT_BURST": "100000",
            "FAIRWAY_LOG_LEVEL": "warning",
        }

    def start(self) -> None:
        self.pg.make()
        self.redis.start()
        self.proxy_context = TcpProxy.to(self.pg.url())
        self.proxy = self.proxy_context.__enter__()
        for number, port in enumerate(self.api_ports, 1):
            name = f"api-{number}"
            self.apis.append(Proc(name, ["serve", "--port", str(port)], self.env(name), self.logs))
        for number in range(1, self.projector_count + 1):
            name = f"projector-{number}"
            self.projectors.append(Proc(name, ["projector"], self.env(name), self.logs))
        self.referee = Proc("referee", ["referee"], self.env("referee"), self.logs)
        self.bots = Proc("bots", ["bots"], self.env("bots"), self.logs)
        for proc in self.processes():
            proc.start()
        for index in range(len(self.apis)):
            self.wait_api(index)

    def processes(self) -> list[Proc]:
        extra = [p for p in (self.referee, self.bots) if p is not None]
        return [*self.apis, *self.projectors, *extra]

    def wait_api(self, index: int) -> None:
        base = self.bases[index]

        def healthy() -> bool:
            exited = self.apis[index].exited()
            if exited is not None:
                raise RuntimeError(f"api-{index + 1} exited with {exited}; see {self.logs}")
            try:
                return httpx.get(f"{base}/health", timeout=2).status_code == 200
            except httpx.HTTPError:
                return False

        until(healthy, f"{base}/health answers 200")

    def dead(self) -> list[str]:
        """The processes that ended by themselves (none should)."""
        return [f"{p.name} ({p.exited()})" for p in self.processes() if p.exited() is not None]

    def close(self) -> None:
        for proc in self.processes():
            with contextlib.suppress(Exception):
                proc.kill()
        with contextlib.suppress(Exception):
            self.redis.kill()
        if self.proxy_context is not None:
            with contextlib.suppress(Exception):
                self.proxy_context.__exit__(None, None, None)
        self.pg.close()

    def remove(self) -> None:
        shutil.rmtree(self.root, ignore_errors=True)
