"""The systems of benchmarks/side_by_side.py, their measured windows and the report: the
tables of each mode, Fairway's ratios to each boardgame.io system, and each system's paced
premium (see side_by_side.py's docstring for what is measured and how)."""

from __future__ import annotations

import argparse
import statistics
import subprocess
from dataclasses import dataclass, field
from typing import Final

from benchmarks.load.bots import Opener
from benchmarks.load.client import Client, RawClient
from benchmarks.load.processes import CpuMeter
from benchmarks.load.server import balance

CLOSED: Final = 0.0
"""The closed loop's mode (a paced mode is its rate)."""


@dataclass
class Window:
    rate: float
    p99: float
    server_us: float
    postgres_us: float
    other: float
    """Share of the machine other people's work took during the window."""
    errors: int
    why: str
    """The kinds of errors, if any."""
    after_us: float = 0.0
    """Server and PostgreSQL CPU in the `--after` seconds past the window, per action answered
    in the phase (0 without `--after`)."""


@dataclass
class System:
    name: str
    label: str
    port: int
    server: subprocess.Popen[bytes]
    meter: CpuMeter
    opener: Opener
    uses_postgres: bool
    workers: list[int] = field(default_factory=list)
    """Fairway's API workers, over which the connections are spread."""
    projector: subprocess.Popen[str] | None = None
    """Fairway's projector process, with `--projector redis`."""
    windows: dict[float, list[Window]] = field(default_factory=dict)
    """Each mode's windows, one a round."""

    async def clients(self, games: int) -> list[Client]:
        raw = [RawClient(self.port) for _ in range(games)]
        if len(self.workers) > 1:
            await balance(raw, self.workers, self.port)
        return list(raw)


def spread(values: list[float], fmt: str = ",.0f") -> str:
    return f"{statistics.median(values):{fmt}} [{min(values):{fmt}}-{max(values):{fmt}}]"


def mode_name(mode: float) -> str:
    return f"paced at {mode:,.0f}/s" if mode else "closed loop"


def cpu_us(window: Window) -> float:
    """Server and PostgreSQL CPU per action, with what was spent after the window."""
    return window.server_us + window.postgres_us + window.after_us


def report(systems: list[System], args: argparse.Namespace, mode: float) -> None:
    print(f"\nmedian [range] over {args.rounds} rounds, {mode_name(mode)}, {args.games} games:")
    after = f" | CPU after the window, per action ({args.after:g} s)" if args.after else ""
    print(
        "| system | actions/s | p99 ms | server CPU per action | PostgreSQL CPU per action"
        f"{after} |"
    )
    print("| --- | --- | --- | --- | --- |" + (" --- |" if after else ""))
    for s in systems:
        w = s.windows[mode]
        pg = spread([x.postgres_us for x in w]) + " µs" if s.uses_postgres else "-"
        p99 = spread([x.p99 * 1e3 for x in w], ".1f")
        tail = f" | {spread([x.after_us for x in w])} µs" if after else ""
        print(
            f"| {s.label} | {spread([x.rate for x in w])} | {p99}"
            f" | {spread([x.server_us for x in w])} µs | {pg}{tail} |"
        )
    by_name = {s.name: s for s in systems}
    fairway = by_name.get("fairway")
    if fairway is None:
        return
    for other in (by_name.get("bgio-memory"), by_name.get("bgio-postgres")):
        if other is None:
            continue
        pairs = list(zip(fairway.windows[mode], other.windows[mode], strict=True))
        rates = [a.rate / b.rate for a, b in pairs]
        cpus = [cpu_us(a) / cpu_us(b) for a, b in pairs]
        print(
            f"Fairway / {other.label}: actions/s {spread(rates, '.2f')}x;"
            f" server + PostgreSQL CPU per action{' (after included)' if args.after else ''}"
            f" {spread(cpus, '.2f')}x (same-round ratios)"
        )


def report_premiums(systems: list[System], modes: list[float]) -> None:
    """Each system's CPU per action paced over its closed loop's, round by round."""
    paced = [m for m in modes if m != CLOSED]
    if CLOSED not in modes or not paced:
        return
    print(
        "\npaced premium: server + PostgreSQL CPU per action (and what --after metered),"
        " paced / closed loop, same round"
    )
    print("| system | " + " | ".join(mode_name(m) for m in paced) + " |")
    print("| --- |" + " --- |" * len(paced))
    premiums: dict[str, dict[float, list[float]]] = {}
    for s in systems:
        closed = s.windows[CLOSED]
        premiums[s.name] = {
            m: [cpu_us(p) / cpu_us(c) for p, c in zip(s.windows[m], closed, strict=True)]
            for m in paced
        }
        cells = [spread(premiums[s.name][m], ".2f") + "x" for m in paced]
        print(f"| {s.label} | " + " | ".join(cells) + " |")
    fairway = premiums.get("fairway")
    for s in systems:
        if fairway is None or s.name == "fairway":
            continue
        cells = [
            spread([a / b for a, b in zip(fairway[m], premiums[s.name][m], strict=True)], ".2f")
            + "x"
            for m in paced
        ]
        print(f"| Fairway's premium / {s.label}'s | " + " | ".join(cells) + " |")
