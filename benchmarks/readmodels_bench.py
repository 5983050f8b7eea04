"""Rebuild-from-zero figures for the scoreboard, players and replay projections.

    python benchmarks/readmodels_bench.py [--games 60] [--seed 1]

Plays games of every variant with bots (their default options: whole games), interleaves
them into one feed, and times each projection over it as the runner applies it (prepare,
keys, apply, the batch's net writes, their JSON), without a store and without reading a
feed: the projections' own cost. Beside it, the bare decider fold of the same events in the
same run, so the ratio says what each read model costs against folding the game once.
benchmarks/readmodels_rebuild.py measures the whole rebuild (event store, runner, Redis).
Prints events/s and microseconds per event of CPU time (the best of 3), and the CPU model.
The garbage collector is settled first, as in `fairway projector` (`--no-settle`: CPython's
defaults).
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

from msgspec.json import encode

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from domain.simulate import play_game
from domain.variants import DECIDERS, bot, start
from events.schema.common import GameOptions
from events.schema.lobby import GameCreated, SeatClaimed
from events.store.base import RecordedEvent
from projections.lobby import LobbyProjection
from projections.players import Players
from projections.ratings import Ratings
from projections.replay import Replays
from projections.runner import MissingDocs, Runner
from projections.scoreboard import Scoreboard
from projections.standings import StandingsProjection
from service.ops import collector
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


def timed(label: str, n: int, run: Any, base: float | None, repeat: int = 3) -> float:
    """The best of `repeat` runs, in this process's CPU time: the machine is shared, and
    wall time counts the waits for a core that other processes hold."""
    spent = float("inf")
    for _ in range(repeat):
        started = time.process_time()
        run()
        spent = min(spent, time.process_time() - started)
    rate = n / spent
    ratio = "" if base is None else f"  ({rate / base:.2f} x the bare fold)"
    print(f"{label:<34} {rate:>10,.0f} events/s {spent / n * 1e6:5.1f} us/event{ratio}")
    return rate


def through_runner(make: Any, events: list[RecordedEvent]) -> Any:
    """The projection as the runner applies it (prepare, keys, apply, the batch's net writes),
    a batch of 1,000 at a time, without a store."""

    def run() -> None:
        projection = make()
        runner = Runner(projection, None, None)  # type: ignore[arg-type]
        docs: dict[str, Any] = {}
        versions: dict[str, int] = {}

        async def go() -> None:
            for start_at in range(0, len(events), 1000):
                batch = events[start_at : start_at + 1000]
                prepare = getattr(projection, "prepare", None)
                if prepare is not None:
                    await prepare(batch)
                while True:
                    try:
                        changes, _ = runner.fold(batch, dict(docs), dict(versions))
                    except MissingDocs as more:  # the ratings' players: none rated yet
                        docs.update(dict.fromkeys(more.keys))
                        continue
                    break
                docs.update(changes.docs)
                versions.update(changes.versions)
                encode(changes.docs)  # what a store sends: the docs as JSON

        asyncio.run(go())

    return run


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--games", type=int, default=60)
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument(
        "--no-settle", action="store_true", help="leave the garbage collector's defaults"
    )
    args = parser.parse_args()
    events = feed(args.games, args.seed)
    if not args.no_settle:
        collector.settle()  # as `fairway projector` does once it has started
    n = len(events)
    hands = sum(e.type == "hand.ended" for e in events)
    print(f"CPU: {cpu()}; Python {platform.python_version()}")
    print(f"feed: {args.games} games, {hands} hands, {n:,} events (batches of 1,000)")
    base = timed("bare decider fold", n, lambda: fold_only(events), None)
    makers = {
        "lobby": LobbyProjection,
        "scoreboard": Scoreboard,
        "players": Players,
        "replay": Replays,
        "standings": StandingsProjection,
        "ratings": Ratings,
    }
    for name, make in makers.items():
        timed(name, n, through_runner(make, events), base)

    def mine() -> None:
        for make in (Scoreboard, Players, Replays):
            through_runner(make, events)()

    timed("scoreboard + players + replay", n, mine, base)

    def catalog() -> None:
        for make in makers.values():
            through_runner(make, events)()

    timed("all six", n, catalog, base)


if __name__ == "__main__":
    main()
