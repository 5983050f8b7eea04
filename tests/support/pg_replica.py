"""A PostgreSQL primary and its streaming standby of the test's own, made as an operator makes
them: `initdb` (trust, a replication line in its own pg_hba.conf, `wal_level=replica`), the
primary started, `pg_basebackup -R` (which writes `standby.signal` and the connection to the
primary), the standby started as a hot standby. Both on free loopback ports, their sockets and
files in a temporary directory; stopped, and the directory removed, when the block ends. The
system PostgreSQL on 127.0.0.1:5432 is never touched.

PostgreSQL refuses to run as root: when the tests run as root, every server binary runs as
the `postgres` user (`runuser -u postgres --`), which then owns the directory. The binaries
are found through `pg_config --bindir` (then /usr/lib/postgresql/*/bin). A machine without
them (one that has only Docker, say) cannot run these tests: `MissingPostgres` says what is
missing, and the test fails; it is never skipped.

Every wait is bounded: `pg_ctl -w -t`, `pg_isready` loops and the replication checks each
give up after `WITHIN` seconds with what they were waiting for.
"""

from __future__ import annotations

import contextlib
import glob
import os
import pwd
import shutil
import signal
import subprocess
import tempfile
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path

import psycopg

from events.migrate import migrate
from tests.api.server import free_port

WITHIN = 45.0
"""Seconds any one step may take (a server starting, the standby catching up): a bound for
a broken or badly loaded machine, never the subject of an assertion."""
NEEDED = ("initdb", "pg_ctl", "pg_basebackup", "pg_isready", "postgres")
DATABASE = "fairway"
_HBA = """\
# Written by tests/support/pg_replica.py: trust on loopback, replication included.
local   all             all                                     trust
host    all             all             127.0.0.1/32            trust
host    replication     all             127.0.0.1/32            trust
local   replication     all                                     trust
"""


class MissingPostgres(RuntimeError):
    """PostgreSQL's server binaries (or the user to run them as) are not on this machine."""


def bindir() -> Path:
    """Where initdb, pg_ctl, pg_basebackup and postgres are."""
    candidates: list[str] = []
    with contextlib.suppress(OSError, subprocess.SubprocessError):
        found = subprocess.run(
            ["pg_config", "--bindir"], capture_output=True, text=True, timeout=10, check=True
        )
        candidates.append(found.stdout.strip())
    candidates += sorted(glob.glob("/usr/lib/postgresql/*/bin"), reverse=True)
    for directory in candidates:
        if directory and all((Path(directory) / tool).is_file() for tool in NEEDED):
            return Path(directory)
    raise MissingPostgres(
        f"PostgreSQL's server binaries ({', '.join(NEEDED)}) were not found via `pg_config "
        "--bindir` nor in /usr/lib/postgresql/*/bin: the replica tests start a primary and a "
        "streaming standby of their own and need them installed (Debian: postgresql-15). A "
        "container (testcontainers, Docker) cannot stand in: these tests run pg_basebackup "
        "and stop and start the standby themselves."
    )


def _as_server_user() -> list[str]:
    """The prefix that runs a server binary as a user PostgreSQL accepts."""
    if os.geteuid() != 0:
        return []
    try:
        pwd.getpwnam("postgres")
    except KeyError:
        raise MissingPostgres(
            "running as root, and there is no `postgres` user to run the servers as "
            "(PostgreSQL refuses to run as root)"
        ) from None
    if shutil.which("runuser") is None:
        raise MissingPostgres("running as root, and `runuser` is missing")
    return ["runuser", "-u", "postgres", "--"]


@dataclass
class Cluster:
    """One server: its data directory and port."""

    name: str
    data: Path
    port: int
    sockets: Path

    def url(self, database: str = DATABASE) -> str:
        return f"postgresql://postgres@127.0.0.1:{self.port}/{database}"


class ReplicaPair:
    """A primary and its streaming standby. `stop_standby`/`start_standby` for the tests."""

    def __init__(self, root: Path) -> None:
        self.root = root
        self.bin = bindir()
        self.prefix = _as_server_user()
        sockets = root / "sockets"
        self.primary = Cluster("primary", root / "primary", free_port(), sockets)
        self.standby = Cluster("standby", root / "standby", free_port(), sockets)
        self.started: list[Cluster] = []

    # ---- running the binaries ----------------------------------------------------------------

    def _run(self, tool: str, *args: str) -> str:
        command = [*self.prefix, str(self.bin / tool), *args]
        try:
            done = subprocess.run(
                command, capture_output=True, text=True, timeout=WITHIN, check=False
            )
        except subprocess.TimeoutExpired:
            raise RuntimeError(f"{tool} did not finish within {WITHIN:g} s") from None
        if done.returncode != 0:
            raise RuntimeError(f"{tool} failed ({done.returncode}): {done.stderr[-2000:]}")
        return done.stdout

    def _options(self, cluster: Cluster) -> str:
        """The server's settings, given on the command line (the base backup copies the
        primary's files, not these): its port, loopback only, sockets in our directory."""
        settings = {
            "port": cluster.port,
            "listen_addresses": "127.0.0.1",
            "unix_socket_directories": str(cluster.sockets),
            "wal_level": "replica",
            "max_wal_senders": 5,
            "hot_standby": "on",
            "hot_standby_feedback": "on",
            "fsync": "off",  # a throw-away cluster: durability is not what is tested
            "shared_buffers": "32MB",
            "max_connections": 60,
        }
        return " ".join(f"-c {name}={value}" for name, value in settings.items())

    def start(self, cluster: Cluster) -> None:
        log = self.root / f"{cluster.name}.log"
        self._run(
            "pg_ctl", "start", "-D", str(cluster.data), "-l", str(log), "-w",
            "-t", str(int(WITHIN)), "-o", self._options(cluster),
        )  # fmt: skip
        if cluster not in self.started:
            self.started.append(cluster)
        self._until(lambda: self._ready(cluster), f"pg_isready says {cluster.name} accepts")

    def stop(self, cluster: Cluster, mode: str = "fast") -> None:
        if cluster in self.started:
            self.started.remove(cluster)
            self._run(
                "pg_ctl", "stop", "-D", str(cluster.data), "-m", mode, "-w", "-t", str(int(WITHIN))
            )  # fmt: skip

    def _ready(self, cluster: Cluster) -> bool:
        command = [
            str(self.bin / "pg_isready"), "-h", "127.0.0.1", "-p", str(cluster.port),
            "-U", "postgres", "-t", "2",
        ]  # fmt: skip
        try:
            return subprocess.run(command, capture_output=True, timeout=10).returncode == 0
        except subprocess.TimeoutExpired:
            return False

    @staticmethod
    def _until(condition: Callable[[], bool], what: str) -> None:
        deadline = time.monotonic() + WITHIN
        while not condition():
            if time.monotonic() > deadline:
                raise RuntimeError(f"gave up after {WITHIN:g} s waiting until {what}")
            time.sleep(0.05)

    # ---- making the pair ---------------------------------------------------------------------

    def make(self) -> None:
        """initdb, start the primary, make the database, base backup, start the standby,
        migrate the primary and wait until the standby shows the migrated schema."""
        self.primary.sockets.mkdir()
        if self.prefix:
            shutil.chown(self.root, "postgres", "postgres")
            shutil.chown(self.primary.sockets, "postgres", "postgres")
        self._run(
            "initdb", "-D", str(self.primary.data), "-U", "postgres", "--auth=trust",
            "-E", "UTF8", "--no-sync", "--no-instructions",
        )  # fmt: skip
        hba = self.primary.data / "pg_hba.conf"
        hba.write_text(_HBA)
        if self.prefix:
            shutil.chown(hba, "postgres", "postgres")
        self.start(self.primary)
        with psycopg.connect(self.primary.url("postgres"), autocommit=True) as conn:
            conn.execute(f"CREATE DATABASE {DATABASE}")
        self._run(
            "pg_basebackup", "-h", "127.0.0.1", "-p", str(self.primary.port), "-U", "postgres",
            "-D", str(self.standby.data), "-R", "-X", "stream", "--checkpoint=fast", "--no-sync",
        )  # fmt: skip
        self.start(self.standby)
        self._until(self.streaming, "the primary streams WAL to the standby")
        migrate(self.primary.url())
        self._until(self.standby_has_schema, "the standby shows the migrated schema")

    def streaming(self) -> bool:
        with psycopg.connect(self.primary.url("postgres"), autocommit=True) as conn:
            row = conn.execute(
                "SELECT count(*) FROM pg_stat_replication WHERE state = 'streaming'"
            ).fetchone()
        return bool(row and row[0])

    def standby_has_schema(self) -> bool:
        try:
            with psycopg.connect(self.standby.url(), autocommit=True, connect_timeout=2) as conn:
                return conn.execute("SELECT count(*) FROM installation").fetchone() == (1,)
        except psycopg.Error:
            return False

    # ---- for the tests -----------------------------------------------------------------------

    def stop_standby(self) -> None:
        self.stop(self.standby)

    def start_standby(self) -> None:
        self.start(self.standby)
        self._until(self.streaming, "the restarted standby streams again")

    def replayed(self) -> bool:
        """Whether the standby has replayed all the WAL the primary has written so far."""
        with psycopg.connect(self.primary.url("postgres"), autocommit=True) as conn:
            target = conn.execute("SELECT pg_current_wal_lsn()::text").fetchone()
        assert target is not None
        with psycopg.connect(self.standby.url("postgres"), autocommit=True) as conn:
            row = conn.execute(
                "SELECT pg_last_wal_replay_lsn() >= %s::pg_lsn", (target[0],)
            ).fetchone()
        return bool(row and row[0])

    def wait_replayed(self) -> None:
        self._until(self.replayed, "the standby has replayed the primary's WAL")

    def close(self) -> None:
        for cluster in list(reversed(self.started)):
            try:
                self.stop(cluster, "immediate")
            except RuntimeError:  # pg_ctl failed: end the postmaster by its pid file
                with contextlib.suppress(OSError, ValueError, IndexError):
                    pid = int((cluster.data / "postmaster.pid").read_text().split()[0])
                    os.kill(pid, signal.SIGQUIT)


@contextlib.contextmanager
def replica_pair() -> Iterator[ReplicaPair]:
    """A migrated primary (database `fairway`) and its streaming standby, ready; both stopped
    and their directory removed on leaving."""
    root = Path(tempfile.mkdtemp(prefix="fairway-replica-"))
    root.chmod(0o755)
    pair: ReplicaPair | None = None
    try:
        pair = ReplicaPair(root)
        pair.make()
        yield pair
    finally:
        if pair is not None:
            pair.close()
        shutil.rmtree(root, ignore_errors=True)
