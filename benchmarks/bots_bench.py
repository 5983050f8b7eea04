"""The strong bot against greedy bots: how often it wins, and what a decision costs.

    python benchmarks/bots_bench.py [--games 1000] [--seed 0] [--players 4]
                                    [--variants hang-ten,tens,...] [--processes 2]

For every variant, N whole games of one strong bot against greedy bots (4 players: every
variant allows 4), the strong seat rotating game by game. Prints the strong seat's win rate
with a 95% Wilson interval against parity (a shared win counts as a share), its average
place against the average place of every seat (ties share the place), and the CPU time of
one decision (time.process_time around `choose`: median and p99) for the strong bot and for
the greedy bots of the same games, with their ratio. The games run in `--processes`
processes; CPU time is per process, so other load on the machine matters little.
"""

from __future__ import annotations

import argparse
import math
import multiprocessing
import random
import statistics
import time
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from domain.simulate import play_game
from domain.variants import DECIDERS, bot, decider_for, high_wins


class TimedBot:
    """A bot whose every decision's CPU time is recorded."""

    def __init__(self, inner: Any) -> None:
        self.inner = inner
        self.kind = inner.kind
        self.spent: list[float] = []

    def choose(self, view: Any, legal: Any, rng: Any) -> Any:
        started = time.process_time()
        choice = self.inner.choose(view, legal, rng)
        self.spent.append(time.process_time() - started)
        return choice


def play(job: tuple[str, int, int, int]) -> dict[str, Any]:
    """One game: the strong seat's share of the win, its place, every seat's places, and
    the CPU times of both kinds of bot."""
    variant, players, seed, game = job
    decider = decider_for(variant)
    strong_seat = game % players
    bots = [
        TimedBot(bot("strong" if s == strong_seat else "greedy", variant)) for s in range(players)
    ]
    master = seed.to_bytes(8, "big", signed=True) + game.to_bytes(8, "big")
    rng = random.Random(seed * 1_000_003 + game)
    record = play_game(decider, players, bots, master, rng)
    totals = record.totals
    better = (lambda a, b: a > b) if high_wins(variant) else (lambda a, b: a < b)
    places = [1 + sum(better(other, mine) for other in totals) for mine in totals]
    return {
        "win": 1 / len(record.winners) if strong_seat in record.winners else 0.0,
        "place": places[strong_seat],
        "places": places,
        "strong": bots[strong_seat].spent,
        "greedy": [t for s, b in enumerate(bots) if s != strong_seat for t in b.spent],
    }


def wilson(wins: float, n: int, z: float = 1.96) -> tuple[float, float]:
    """The 95% Wilson score interval of a proportion."""
    if n == 0:
        return (0.0, 0.0)
    p = wins / n
    centre = (p + z * z / (2 * n)) / (1 + z * z / n)
    half = z * math.sqrt(p * (1 - p) / n + z * z / (4 * n * n)) / (1 + z * z / n)
    return (centre - half, centre + half)


def p99(values: list[float]) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(0.99 * len(ordered)))]


def cpu_model() -> str:
    for line in Path("/proc/cpuinfo").read_text().splitlines():
        if line.startswith("model name"):
            return line.split(":", 1)[1].strip()
    return "unknown"


def run_variant(pool: Any, variant: str, games: int, players: int, seed: int) -> dict[str, Any]:
    started = time.perf_counter()
    jobs = [(variant, players, seed, game) for game in range(games)]
    results = pool.map(play, jobs, chunksize=max(1, games // 40))
    elapsed = time.perf_counter() - started
    wins = sum(r["win"] for r in results)
    low, high = wilson(wins, games)
    strong = [t for r in results for t in r["strong"]]
    greedy = [t for r in results for t in r["greedy"]]
    return {
        "variant": variant,
        "games": games,
        "players": players,
        "win_rate": wins / games,
        "ci": (low, high),
        "parity": 1 / players,
        "place": statistics.fmean(r["place"] for r in results),
        "place_parity": statistics.fmean(p for r in results for p in r["places"]),
        "strong_median": statistics.median(strong),
        "strong_p99": p99(strong),
        "greedy_median": statistics.median(greedy),
        "greedy_p99": p99(greedy),
        "decisions": len(strong) / games,
        "seconds": elapsed,
    }


def render(row: dict[str, Any]) -> str:
    low, high = row["ci"]
    ms = 1000
    return (
        f"{row['variant']:<14} {row['games']} games, {row['players']} players, "
        f"{row['games'] / row['seconds']:.1f} games/s\n"
        f"  strong wins {row['win_rate']:6.1%} (95% CI {low:.1%}-{high:.1%}), parity "
        f"{row['parity']:.1%}: {row['win_rate'] / row['parity']:.2f}x parity\n"
        f"  average place {row['place']:.2f} (every seat {row['place_parity']:.2f})\n"
        f"  CPU per decision: strong median {row['strong_median'] * ms:.2f} ms, p99 "
        f"{row['strong_p99'] * ms:.2f} ms ({row['decisions']:.0f} decisions/game); greedy "
        f"median {row['greedy_median'] * ms:.3f} ms, p99 {row['greedy_p99'] * ms:.3f} ms; "
        f"ratio {row['strong_median'] / row['greedy_median']:.1f}x median"
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--games", type=int, default=1000)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--players", type=int, default=4)
    parser.add_argument("--variants", default=",".join(DECIDERS))
    parser.add_argument("--processes", type=int, default=2)
    args = parser.parse_args()
    print(f"CPU: {cpu_model()}; {datetime.now(UTC):%Y-%m-%d %H:%M} UTC; seed {args.seed}")
    with multiprocessing.Pool(args.processes) as pool:
        for variant in args.variants.split(","):
            print(render(run_variant(pool, variant, args.games, args.players, args.seed)))
            print(flush=True)


if __name__ == "__main__":
    main()
