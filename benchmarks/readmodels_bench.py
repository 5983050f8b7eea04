"""Rebuild-from-zero figures for the scoreboard, players and replay projections.

    python benchmarks/readmodels_bench.py [--games 60] [--seed 1]

Plays games of every variant with bots (their default options: whole games), interleaves
them into one feed, and times each projection rebuilding from zero over it through a
projector over plain dicts (the projections' own cost: folding, apply, JSON of the docs;
no store), beside the bare decider fold of the same events, measured in the same run, so the
ratio says what each read model adds to folding. Prints events/s and the CPU model.
"""

from __future__ import annotations

import argparse
import asyncio
import platform
import random
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from domain.simulate import play_game
from domain.variants import DECIDERS, bot, start
from events.schema.common import GameOptions
from events.schema.lobby import GameCreated, SeatClaimed
from projections.folds import GameFolds
from projections.players import Players
from projections.replay import Replays
from projections.scoreboard import Scoreboard
from tests.support.dict_projector import project
from tests.support.feeds import interleave


def cpu() -> str:
    try:
        out = subprocess.run(["lscpu"], capture_output=True, text=True, check=True).stdout
        for line in out.splitlines():
            if line.startswith("Model name"):
                return line.split(":", 1)[1].strip()
    except (OSError, subprocess.CalledProcessError):
        pass
    return platform.processor() or "unknown"


def feed(games: int, seed: int) -> list[Any]:
    rng = random.Random(seed)
    variants = sorted(DECIDERS)
    streams: dict[str, list[Any]] = {}
    for i in range(games):
        variant = variants[i % len(variants)]
        decider = DECIDERS[variant]
        players = decider.min_players
        events: list[Any] = [GameCreated(variant, players, GameOptions(), "0" * 64)]
        events += [SeatClaimed(seat, f"p{rng.randrange(20)}", "1" * 64) for seat in range(players)]
        bots = [bot("greedy", variant) for _ in range(players)]
        events += play_game(decider, players, bots, rng.randbytes(32), rng).events
        streams[f"game:{i:016x}"] = events
    return interleave(rng, streams)


def fold_only(events: list[Any]) -> None:
    states: dict[str, Any] = {}
    for e in events:
        if isinstance(e.data, GameCreated | SeatClaimed):
            continue
        if e.type == "game.started":
            states[e.stream_id] = start(e.data)
        else:
            decider, state = states[e.stream_id]
            states[e.stream_id] = (decider, decider.evolve(state, e.data))


def timed(label: str, n: int, run: Any, base: float | None) -> float:
    started = time.perf_counter()
    run()
    spent = time.perf_counter() - started
    rate = n / spent
    ratio = "" if base is None else f"  ({rate / base:.2f} x the bare fold)"
    print(f"{label:<34} {rate:>10,.0f} events/s{ratio}")
    return rate


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--games", type=int, default=60)
    parser.add_argument("--seed", type=int, default=1)
    args = parser.parse_args()
    events = feed(args.games, args.seed)
    n = len(events)
    hands = sum(e.type == "hand.ended" for e in events)
    print(f"CPU: {cpu()}; Python {platform.python_version()}")
    print(f"feed: {args.games} games, {hands} hands, {n:,} events (batches of 1,000)")
    base = timed("bare decider fold", n, lambda: fold_only(events), None)

    def run(make: Any) -> Any:
        return lambda: asyncio.run(project(make(), events, batch=1000))

    timed("scoreboard", n, run(lambda: Scoreboard(GameFolds())), base)
    timed("players", n, run(Players), base)
    timed("replay", n, run(lambda: Replays(GameFolds(play=False))), base)

    async def together() -> None:
        for make in (
            lambda: Scoreboard(GameFolds()),
            Players,
            lambda: Replays(GameFolds(play=False)),
        ):
            await project(make(), events, batch=1000)

    timed("all three, one after the other", n, lambda: asyncio.run(together()), base)


if __name__ == "__main__":
    main()
