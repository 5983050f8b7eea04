"""The fault run: the whole of Fairway as real processes, played while it is broken.

Starts a PostgreSQL cluster and a redis-server of its own (free loopback ports; the system
ones on 5432 and 6379 are never touched), migrates it, and runs three `fairway serve`
instances (one DATABASE_URL, one REDIS_URL, one FAIRWAY_RECEIPT_KEY), two `fairway
projector`s, `fairway referee` and `fairway bots`; every process reaches PostgreSQL through a
TCP proxy the run controls. Players open and play two-seat games over HTTP against random
instances (Idempotency-Key on every POST, retried with the same key on a connection error, a
5xx or a 429), some with a bot seat, some with a seat resigned for the referee to play;
spectators follow the games' event streams, resuming on another instance; an organiser runs
duplicate tournaments of bot players one after another (benchmarks/fault/tournaments.py).

Meanwhile, faults on a schedule, in turn: kill -9 of an API instance, of a projector, of
the referee, of the bots (each restarted); Redis killed and restarted; Redis flushed;
PostgreSQL crashed (`pg_ctl stop -m immediate`) and restarted; the network to PostgreSQL
cut (every connection reset) and restored; then black-holed (nothing passes, no reset) and
restored.

Then the checks (benchmarks/fault/checks.py): every acknowledged write stored once at its
acknowledged version; every game's audit (chain, deals, moves, scores) and every receipt held
against the installation's keys; the read models equal to a rebuild from zero, key for key;
every watcher's events once, in order, across its resumes; each tournament round started and
closed once and each tournament's audit passing; no 500; Retry-After on every 503. Prints a
summary and exits 1 if anything failed (2 if the system could not be started).

    .venv/bin/python -m benchmarks.fault_run --seconds 240 --players 8 --watchers 6
"""

from __future__ import annotations

import argparse
import os
import platform
import random
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from benchmarks.fault.checks import run_checks
from benchmarks.fault.cluster import System
from benchmarks.fault.load import Ledger, Player, Watcher
from benchmarks.fault.tournaments import Organiser

KINDS = ("claim", "action", "resign")
JOIN_WITHIN = 120.0
"""Seconds the load threads have to notice the end of the run (each finishes its request)."""


@dataclass
class Faults:
    system: System
    rng: random.Random
    pause: float
    done: list[tuple[float, str]] = field(default_factory=list)

    def schedule(self) -> list[tuple[str, Callable[[], None]]]:
        return [
            ("kill -9 an API instance", self.api),
            ("kill -9 a projector", self.projector),
            ("kill -9 the referee", lambda: self.restart(self.system.referee)),
            ("Redis killed and restarted", self.redis_restart),
            ("PostgreSQL crashed and restarted", self.postgres_crash),
            ("kill -9 the bots", lambda: self.restart(self.system.bots)),
            ("Redis flushed", self.system.redis.flush),
            ("PostgreSQL connections cut", self.cut),
            ("PostgreSQL black-holed", self.blackhole),
        ]

    def restart(self, proc: Any) -> None:
        proc.kill()
        time.sleep(self.pause)
        proc.start()

    def api(self) -> None:
        index = self.rng.randrange(len(self.system.apis))
        self.restart(self.system.apis[index])
        self.system.wait_api(index)

    def projector(self) -> None:
        self.restart(self.rng.choice(self.system.projectors))

    def redis_restart(self) -> None:
        self.system.redis.kill()
        time.sleep(self.pause)
        self.system.redis.start()

    def postgres_crash(self) -> None:
        self.system.pg.crash()
        time.sleep(self.pause)
        self.system.pg.start()

    def blackhole(self) -> None:
        """Nothing passes either way, no reset: requests wait for FAIRWAY_DB_TIMEOUT."""
        assert self.system.proxy is not None
        self.system.proxy.blackhole()
        time.sleep(self.pause)
        self.system.proxy.restore()

    def cut(self) -> None:
        assert self.system.proxy is not None
        self.system.proxy.cut()
        time.sleep(self.pause)
        self.system.proxy.restore()


def run(
    seconds: float,
    players: int,
    watchers: int,
    every: float,
    seed: int = 1,
    pause: float = 1.0,
    tournaments: bool = True,
) -> int:
    """The whole run; returns the exit status after printing the summary. `pause`: seconds
    a killed process or service stays down."""
    started = time.monotonic()
    system = System()
    ledger, stop = Ledger(), threading.Event()
    threads: list[threading.Thread] = []
    faults = Faults(system, random.Random(seed), pause)
    try:
        try:
            system.start()
        except Exception as error:
            print(f"fault run: the system did not start: {error} (logs: {system.logs})")
            return 2
        print(f"fault run: system up in {time.monotonic() - started:.1f} s ({system.root})")
        bases = system.bases
        threads = [
            threading.Thread(target=Player(n, bases, ledger, stop).run, name=f"player-{n}")
            for n in range(players)
        ] + [
            threading.Thread(target=Watcher(n, bases, ledger, stop).run, name=f"watcher-{n}")
            for n in range(watchers)
        ]
        if tournaments:
            organiser = Organiser(bases, ledger, stop)
            threads.append(threading.Thread(target=organiser.run, name="organiser"))
        for thread in threads:
            thread.start()
        load_started = time.monotonic()
        plan, turn = faults.schedule(), 0
        # Faults every `every` seconds for `seconds`, and on until each kind has come once.
        while time.monotonic() - load_started < seconds or turn < len(plan):
            time.sleep(every)
            name, fault = plan[turn % len(plan)]
            at = time.monotonic() - load_started
            fault()
            faults.done.append((at, name))
            print(f"  {at:6.1f} s  {name}  ({len(ledger.acks)} acknowledged so far)")
            turn += 1
        stop.set()
        load_seconds = time.monotonic() - load_started
        deadline = time.monotonic() + JOIN_WITHIN
        for thread in threads:
            thread.join(max(0.1, deadline - time.monotonic()))
        stuck = [thread.name for thread in threads if thread.is_alive()]
        print(f"fault run: load stopped in {time.monotonic() - load_started - load_seconds:.1f} s")
        dead = system.dead()
        # Nothing more is appended once the referee and the bots are stopped.
        for proc in (system.referee, system.bots):
            if proc is not None:
                proc.kill(15)
        checking = time.monotonic()
        results = run_checks(system.pg.url(), system.redis.url, ledger)
        print(f"fault run: checked in {time.monotonic() - checking:.1f} s")
        if stuck:
            results["load threads ended"] = (len(threads), [f"stuck: {stuck}"])
        results["no process died by itself"] = (len(system.processes()), dead)
        return summary(ledger, faults, results, load_seconds, players, watchers)
    finally:
        stop.set()
        closing = time.monotonic()
        system.close()
        print(f"fault run: stopped everything in {time.monotonic() - closing:.1f} s")
        for thread in threads:
            thread.join(5)
        if os.environ.get("FAIRWAY_FAULT_KEEP"):
            print(f"fault run: kept {system.root}")
        else:
            system.remove()


def cpu_model() -> str:
    try:
        with open("/proc/cpuinfo") as f:
            for line in f:
                if line.startswith("model name"):
                    return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or "unknown CPU"


def summary(
    ledger: Ledger,
    faults: Faults,
    results: dict[str, Any],
    seconds: float,
    players: int,
    watchers: int,
) -> int:
    load = " ".join(f"{x:.2f}" for x in os.getloadavg())
    print(f"\nFault run on {cpu_model()} x{os.cpu_count()}, load average {load}")
    print(
        f"  {seconds:.0f} s of load: {players} players, {watchers} watchers; "
        f"{len(ledger.games)} games opened, {ledger.finished} finished, "
        f"{ledger.abandoned} given up"
    )
    kinds = {kind: sum(1 for a in ledger.acks if a.kind == kind) for kind in KINDS}
    print(f"  acknowledged writes: {len(ledger.acks)} {kinds}")
    unavailable = {k: n for k, n in sorted(ledger.statuses.items()) if k >= 500 or k == 429}
    errors = ledger.errors
    print(
        f"  answers: {sum(ledger.statuses.values())}, of them retried {unavailable or 'none'}; "
        f"connection errors retried: {sum(errors.values())} {dict(errors)}"
    )
    print(f"  faults injected: {len(faults.done)}")
    for name in dict.fromkeys(name for _, name in faults.done):
        print(f"    {sum(1 for _, n in faults.done if n == name)} x {name}")
    failed = 0
    for name, (figure, failures) in results.items():
        print(f"  [{'FAIL' if failures else 'ok'}] {name}: {figure}")
        for failure in failures[:10]:
            print(f"        {failure}")
        failed += bool(failures)
    verdict = "FAILED" if failed else "passed"
    print(f"fault run: {verdict} ({len(results) - failed}/{len(results)} checks passed)")
    return 1 if failed else 0


def main() -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--seconds", type=float, default=240.0, help="seconds of load (240)")
    p.add_argument("--players", type=int, default=8, help="player threads (8)")
    p.add_argument("--watchers", type=int, default=6, help="SSE watcher threads (6)")
    p.add_argument("--every", type=float, default=12.0, help="seconds between faults (12)")
    p.add_argument("--pause", type=float, default=1.0, help="seconds a fault lasts (1)")
    p.add_argument("--seed", type=int, default=1)
    args = p.parse_args()
    return run(args.seconds, args.players, args.watchers, args.every, args.seed, args.pause)


if __name__ == "__main__":
    raise SystemExit(main())
