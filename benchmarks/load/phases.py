"""The measured windows: the games played closed loop or paced, GET /health likewise
(echo), and one game driven deep beside young ones (depth)."""

from __future__ import annotations

import argparse
import asyncio
import random
import time
from collections.abc import Awaitable, Callable, Sequence

from benchmarks.load.bots import SCRIPTED, Bot, Opener, Table, act_once, open_table, play
from benchmarks.load.client import Client
from benchmarks.load.pacing import Pace
from benchmarks.load.processes import CpuMeter, CpuWindow
from benchmarks.load.stats import Depth, Stats


async def timed_window(
    tasks: Sequence[Awaitable[None]],
    stats: Stats,
    stop: asyncio.Event,
    meter: CpuMeter,
    warmup: float,
    seconds: float,
    settled: Callable[[], bool] | None = None,
) -> CpuWindow:
    """`tasks` run for `warmup` s (and, given `settled`, until it holds, at most 300 s),
    then measured for `seconds` s."""
    running = [asyncio.ensure_future(t) for t in tasks]
    try:
        await asyncio.sleep(warmup)
        deadline = time.monotonic() + 300
        while settled is not None and not settled() and time.monotonic() < deadline:
            await asyncio.sleep(0.1)
        stats.measuring = True
        start = meter.snapshot()
        await asyncio.sleep(seconds)
        end = meter.snapshot()
        stats.measuring = False
    finally:
        stop.set()
        await asyncio.wait(running, timeout=30)
        for task in running:
            task.cancel()
    for task in running:
        if task.done() and not task.cancelled() and task.exception() is not None:
            raise task.exception()  # type: ignore[misc]
    return meter.window(start, end)


async def action_phase(
    args: argparse.Namespace,
    clients: list[Client],
    meter: CpuMeter,
    rate: float,
    opener: Opener = open_table,
    all_opened: bool = False,
) -> tuple[Stats, CpuWindow]:
    """The games played for a window. `all_opened`: the warm-up lasts until every bot has
    opened its table, so that a slow server's lobby work is not measured as its actions'."""
    stats = Stats()
    stop = asyncio.Event()
    tasks = [play(c, args, rate, stats, stop, i, opener) for i, c in enumerate(clients)]
    settled = (lambda: stats.opened >= len(clients)) if all_opened else None
    window = await timed_window(tasks, stats, stop, meter, args.warmup, args.seconds, settled)
    return stats, window


async def echo_phase(
    args: argparse.Namespace, clients: list[Client], meter: CpuMeter
) -> tuple[Stats, CpuWindow]:
    stats = Stats()
    stop = asyncio.Event()

    async def hammer(client: Client, seed: int) -> None:
        pace = Pace(0.0, args.games, random.Random(seed))
        while not stop.is_set():
            late = await pace.wait()
            started = time.perf_counter() - late
            code, _ = await client.call("GET", "/health")
            elapsed = time.perf_counter() - started
            if stats.measuring:
                if code == 200:
                    stats.actions += 1
                    stats.action_latency.append(elapsed)
                    stats.finished_at.append(started + elapsed)
                else:
                    stats.action_errors[code] += 1

    tasks = [hammer(c, i) for i, c in enumerate(clients)]
    window = await timed_window(tasks, stats, stop, meter, min(args.warmup, 3), args.seconds)
    return stats, window


async def depth_phase(args: argparse.Namespace, client: Client) -> Depth:
    """One game past `--depth` events; its latency interleaved with young games'."""
    options = {"hands": 100} | ({"turn_limit": args.turn_limit} if args.turn_limit else {})
    variant = args.variant if args.variant in SCRIPTED else "hang-ten"
    stats = Stats()
    rng = random.Random(7)

    async def fresh() -> tuple[Table, Bot]:
        table = await open_table(client, variant, args.seats, options, None)
        return table, Bot(variant, "scripted", rng)

    deep, deep_bot = await fresh()
    started = time.perf_counter()
    while deep.version < args.depth:
        await act_once(client, deep, deep_bot, stats, False)
        if deep.status.phase == "game_over":
            raise RuntimeError(
                f"the deep game (100 hands) ended at version {deep.version}; lower --depth"
            )
    to_depth = time.perf_counter() - started
    young, young_bot = await fresh()
    young_times: list[float] = []
    deep_times: list[float] = []
    deep_first = deep.version
    young_seen: list[int] = []
    stats.measuring = True
    while len(deep_times) < args.depth_samples or len(young_times) < args.depth_samples:
        if len(deep_times) < args.depth_samples:
            before = len(stats.action_latency)
            await act_once(client, deep, deep_bot, stats, False)
            deep_times += stats.action_latency[before:]
        while young.version < 15:  # past the deal and the setup flips
            await act_once(client, young, young_bot, Stats(), False)
        if young.version > 100 or young.status.phase == "game_over":
            young, young_bot = await fresh()
            continue
        if len(young_times) < args.depth_samples:
            young_seen.append(young.version)
            before = len(stats.action_latency)
            await act_once(client, young, young_bot, stats, False)
            young_times += stats.action_latency[before:]
    if stats.failures or stats.action_errors:
        print(f"  depth: failures {dict(stats.failures)}, errors {dict(stats.action_errors)}")
    return Depth(
        young_times,
        deep_times,
        (deep_first, deep.version),
        (min(young_seen), max(young_seen)),
        to_depth,
    )
