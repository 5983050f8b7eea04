"""Rules-engine figures: folding rate, and whole simulated games with a time breakdown.

    python benchmarks/domain_bench.py [--games 40]

Prints events/s for folding every variant's events from scratch, and the median time of a
6-player Hang Ten game (10 deals) played by random bots that call legal_actions and view on
every move, with the share of time in decide, evolve, view, legal_actions and the bots.
"""

from __future__ import annotations

import argparse
import random
import statistics
import time
from collections import defaultdict
from typing import Any

from domain.bots.base import RandomBot
from domain.simulate import play_game
from domain.variants import DECIDERS, decider_for, fold


class Timed:
    """The decider, with the time spent in each method added up."""

    def __init__(self, decider: Any, spent: dict[str, float]) -> None:
        self._decider = decider
        self._spent = spent
        self.name = decider.name

    def __getattr__(self, name: str) -> Any:
        method = getattr(self._decider, name)
        if not callable(method):
            return method
        spent = self._spent

        def timed(*args: Any) -> Any:
            started = time.perf_counter()
            try:
                return method(*args)
            finally:
                spent[name] += time.perf_counter() - started

        return timed


class TimedBot(RandomBot):
    def __init__(self, spent: dict[str, float]) -> None:
        self._spent = spent

    def choose(self, view: Any, legal: Any, rng: Any) -> Any:
        started = time.perf_counter()
        try:
            return super().choose(view, legal, rng)
        finally:
            self._spent["bots"] += time.perf_counter() - started


def fold_rate(games_per_variant: int) -> None:
    print("folding events from scratch (random bots' games, every variant):")
    for name, decider in DECIDERS.items():
        players = {"hang-ten": 6, "tens-shedding": 4}.get(name, 4)
        recorded = [
            play_game(decider, players, [RandomBot()] * players, bytes([g]), random.Random(g))
            for g in range(games_per_variant)
        ]
        events = sum(len(r.events) for r in recorded)
        best = float("inf")
        for _ in range(3):
            started = time.perf_counter()
            for record in recorded:
                fold(record.events)
            best = min(best, time.perf_counter() - started)
        print(f"  {name:<14} {events:>7} events  {events / best:>12,.0f} events/s")


def hang_ten_games(games: int) -> None:
    decider = decider_for("hang-ten")
    plain: list[float] = []
    for game in range(games):
        started = time.perf_counter()
        play_game(decider, 6, [RandomBot()] * 6, game.to_bytes(4, "big"), random.Random(game))
        plain.append(time.perf_counter() - started)
    times: list[float] = []
    spent: dict[str, float] = defaultdict(float)
    events = 0
    for game in range(games):
        timed = Timed(decider, spent)
        bots = [TimedBot(spent) for _ in range(6)]
        started = time.perf_counter()
        record = play_game(timed, 6, bots, game.to_bytes(4, "big"), random.Random(game))
        times.append(time.perf_counter() - started)
        events += len(record.events)
    total = sum(times)
    print(
        f"\n6-player Hang Ten, 10 deals, random bots, {games} games "
        f"({events / games:,.0f} events a game):"
    )
    print(
        f"  median {statistics.median(plain) * 1000:.1f} ms   "
        f"p90 {statistics.quantiles(plain, n=10)[-1] * 1000:.1f} ms   "
        f"max {max(plain) * 1000:.1f} ms"
    )
    print(
        f"  share of the time (a second run with timers around each call, "
        f"median {statistics.median(times) * 1000:.1f} ms):"
    )
    for part in ("decide", "evolve", "view", "legal_actions", "bots", "status"):
        print(f"    {part:<14} {spent[part] / total:>6.1%}")
    other = 1 - sum(spent.values()) / total
    print(f"    {'loop+timers':<14} {other:>6.1%}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--games", type=int, default=40)
    args = parser.parse_args()
    fold_rate(max(2, args.games // 8))
    hang_ten_games(args.games)


if __name__ == "__main__":
    main()
