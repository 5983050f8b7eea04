"""What a measured window counted: requests, their latencies and errors, the depth
phase's samples, and the percentiles drawn from them."""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field


@dataclass
class Stats:
    """Counts and latencies of requests completed inside the measured window."""

    measuring: bool = False
    actions: int = 0
    action_latency: list[float] = field(default_factory=list)
    finished_at: list[float] = field(default_factory=list)
    """perf_counter() when each request of `action_latency` was answered."""
    action_errors: Counter[int] = field(default_factory=Counter)
    me: int = 0
    other: int = 0
    failures: Counter[str] = field(default_factory=Counter)
    fallbacks: int = 0
    games_finished: int = 0
    opened: int = 0
    """Tables opened since the phase began, warm-up included."""
    answered: int = 0
    """Actions answered 200 since the phase began, warm-up and wind-down included."""


@dataclass
class Depth:
    young: list[float]
    deep: list[float]
    deep_versions: tuple[int, int]
    young_versions: tuple[int, int]
    seconds_to_depth: float


def percentile(sorted_values: list[float], p: float) -> float:
    if not sorted_values:
        return float("nan")
    index = min(len(sorted_values) - 1, max(0, round(p / 100 * len(sorted_values) + 0.5) - 1))
    return sorted_values[index]


def ms(seconds: float) -> str:
    return f"{seconds * 1000:.2f} ms"


def tail_by_second(stats: Stats) -> str:
    """Whether the tail is spread out or comes from a few stalls: p99 of each second."""
    start = min(stats.finished_at)
    seconds: dict[int, list[float]] = {}
    for at, latency in zip(stats.finished_at, stats.action_latency, strict=True):
        seconds.setdefault(int(at - start), []).append(latency)
    p99s = sorted((percentile(sorted(v), 99), s) for s, v in seconds.items() if len(v) >= 20)
    if not p99s:
        return "too few requests a second for a per-second p99"
    worst, when = p99s[-1]
    over = sum(1 for p, _ in p99s if p > 0.050)
    return (
        f"p99 of each second: median {ms(p99s[len(p99s) // 2][0])}, worst {ms(worst)}"
        f" (second {when}); {over} of {len(p99s)} seconds above 50 ms"
    )
