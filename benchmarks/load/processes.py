"""The processes under load, read from /proc: CPU seconds (utime+stime) of the server's
process tree, of this database's PostgreSQL backends and writers, of this load generator and
of every process on the machine, per window; which server worker holds which connection;
and a wait for a quiet machine."""

from __future__ import annotations

import asyncio
import contextlib
import os
import resource
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import psycopg
from psycopg import conninfo

TICK = os.sysconf("SC_CLK_TCK")


def proc_cpu(pid: int) -> float:
    """Seconds of utime+stime of one process (0 if it is gone)."""
    try:
        with open(f"/proc/{pid}/stat", "rb") as f:
            fields = f.read().rsplit(b")", 1)[1].split()
    except OSError:
        return 0.0
    return (int(fields[11]) + int(fields[12])) / TICK


def descendants(root: int) -> list[int]:
    parents: dict[int, int] = {}
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            try:
                with open(f"/proc/{entry}/stat", "rb") as f:
                    parents[int(entry)] = int(f.read().rsplit(b")", 1)[1].split()[1])
            except OSError:
                continue
    found, frontier = [root], [root]
    while frontier:
        parent = frontier.pop()
        children = [pid for pid, ppid in parents.items() if ppid == parent]
        found += children
        frontier += children
    return found


def connection_owners(workers: list[int], port: int) -> dict[int, int]:
    """{client port: worker pid} of the established connections to `port` (the workers'
    fds matched against /proc/net/tcp)."""
    by_inode: dict[str, int] = {}
    for table in ("/proc/net/tcp", "/proc/net/tcp6"):
        with contextlib.suppress(OSError), open(table) as f:
            for line in f.readlines()[1:]:
                cols = line.split()
                if int(cols[1].rsplit(":", 1)[1], 16) == port and cols[3] == "01":
                    by_inode[cols[9]] = int(cols[2].rsplit(":", 1)[1], 16)
    owners = {}
    for pid in workers:
        with contextlib.suppress(OSError):
            for fd in os.listdir(f"/proc/{pid}/fd"):
                with contextlib.suppress(OSError):
                    link = os.readlink(f"/proc/{pid}/fd/{fd}")
                    if link.startswith("socket:[") and link[8:-1] in by_inode:
                        owners[by_inode[link[8:-1]]] = pid
    return owners


def all_processes() -> dict[int, tuple[float, float]]:
    """{pid: (own CPU s, CPU s of its reaped children)} of every process on the machine.
    (Summed per process because /proc/stat's idle time is unreliable on this VM: it reported
    1% busy while the server alone used 18% of the machine.)"""
    found = {}
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            try:
                with open(f"/proc/{entry}/stat", "rb") as f:
                    fields = f.read().rsplit(b")", 1)[1].split()
            except OSError:
                continue
            own = (int(fields[11]) + int(fields[12])) / TICK
            found[int(entry)] = (own, (int(fields[13]) + int(fields[14])) / TICK)
    return found


def machine_cpu(
    start: dict[int, tuple[float, float]], end: dict[int, tuple[float, float]]
) -> float:
    """CPU seconds every process used between two `all_processes()` snapshots (a process
    that started and ended in between counts through its parent's reaped children)."""
    total = 0.0
    for pid, (own, children) in end.items():
        before = start.get(pid)
        total += own + children - (before[0] + before[1] if before else children)
    return total


def self_cpu() -> float:
    usage = resource.getrusage(resource.RUSAGE_SELF)
    return usage.ru_utime + usage.ru_stime


@dataclass
class CpuWindow:
    """CPU seconds spent during a window by each party."""

    server: float = 0.0
    server_by_pid: dict[int, float] = field(default_factory=dict)
    postgres: float = 0.0
    loadgen: float = 0.0
    machine: float = 0.0
    machine_capacity: float = 0.0
    wall: float = 0.0
    end: dict[str, Any] = field(default_factory=dict, repr=False)
    """The snapshot that ended the window (`CpuMeter.snapshot`), to meter on from."""

    @property
    def other(self) -> float:
        return max(0.0, self.machine - self.server - self.postgres - self.loadgen)


class CpuMeter:
    """`others`: processes counted with the server's own tree (a projector of its own, the
    Redis server its read models live in)."""

    def __init__(
        self,
        server_pid: int,
        postgres_pids: Callable[[], list[int]],
        others: Callable[[], list[int]] = list,
    ) -> None:
        self.server_pid = server_pid
        self.postgres_pids = postgres_pids
        self.others = others

    def snapshot(self) -> dict[str, Any]:
        server = {pid: proc_cpu(pid) for pid in [*descendants(self.server_pid), *self.others()]}
        pg = {pid: proc_cpu(pid) for pid in self.postgres_pids()}
        everyone = all_processes()
        return {
            "server": server,
            "pg": pg,
            "self": self_cpu(),
            "all": everyone,
            "wall": time.perf_counter(),
        }

    def window(self, start: dict[str, Any], end: dict[str, Any]) -> CpuWindow:
        by_pid = {pid: cpu - start["server"].get(pid, 0.0) for pid, cpu in end["server"].items()}
        pg = sum(cpu - start["pg"].get(pid, 0.0) for pid, cpu in end["pg"].items())
        return CpuWindow(
            server=sum(by_pid.values()),
            server_by_pid=by_pid,
            postgres=pg,
            loadgen=end["self"] - start["self"],
            machine=machine_cpu(start["all"], end["all"]),
            machine_capacity=(end["wall"] - start["wall"]) * (os.cpu_count() or 1),
            wall=end["wall"] - start["wall"],
            end=end,
        )


async def wait_quiet(limit: float, threshold: float = 0.25) -> float:
    """Wait (at most `limit` s) until the machine was under `threshold` busy for 2 s; returns
    the busy fraction of the last 2 s seen (other people's work skews every figure here)."""
    deadline = time.monotonic() + limit
    while True:
        before = all_processes()
        await asyncio.sleep(2)
        busy = machine_cpu(before, all_processes()) / (2 * (os.cpu_count() or 1))
        if busy < threshold or time.monotonic() >= deadline:
            return busy
        print(f"  (machine {busy:.0%} busy before the phase; waiting)")


def postgres_pids(url: str) -> Callable[[], list[int]]:
    """This database's backends, plus the server's background writers (WAL, checkpoints).
    Asked over one connection held from the first call on, and retried for up to 30 s: on a
    shared PostgreSQL every connection slot may be taken by the time a window ends."""
    name = conninfo.conninfo_to_dict(url)["dbname"]
    held: list[psycopg.Connection[Any]] = []

    def pids() -> list[int]:
        for attempt in range(60):
            try:
                if not held or held[0].closed:
                    held[:] = [psycopg.connect(url, autocommit=True)]
                conn = held[0]
                rows = conn.execute(
                    "SELECT pid FROM pg_stat_activity WHERE (datname = %s AND pid <>"
                    " pg_backend_pid()) OR backend_type IN ('walwriter', 'checkpointer',"
                    " 'background writer')",
                    (name,),
                ).fetchall()
                return [row[0] for row in rows]
            except psycopg.OperationalError:
                if attempt == 59:
                    raise
                if held:
                    held.pop().close()
                time.sleep(0.5)
        raise AssertionError("unreachable")

    return pids
