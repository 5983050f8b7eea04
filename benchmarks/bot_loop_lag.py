"""How long a bot's move holds the event loop: strong bots choosing inline (as they did) or in
a worker thread (service/bots/moves.py, `OFF_LOOP`), the two alternating game by game in one
run.

    python benchmarks/bot_loop_lag.py [--games 20] [--variant basketball]

Each game: four strong bots play a game of the variant to its end through `bot_move`'s
decision (the command path's decide, without the store), one move after another, while a
ticker task on the same event loop asks to be woken every millisecond and records how late
each wake-up comes: what any other request on that loop would wait. Prints per mode the
ticker's lateness (median, p99, max) and a move's wall time (median, p99), and the ratios of
the thread's figures to the inline ones.
"""

from __future__ import annotations

import argparse
import asyncio
import inspect
import statistics
import time
from typing import Any

from bots_bench import cpu_model

from events.schema.common import GameOptions
from events.schema.lobby import GameCreated, SeatClaimed
from service.bots import moves
from service.commands.command import Actor
from service.play.record import GameRecord
from service.play.seating import seated

GAME = "0123456789abcdef"
TICK = 0.001


def table(variant: str) -> GameRecord:
    """A started game of four strong bots, dealt."""
    created = GameCreated(variant, 4, GameOptions(hands=1), "c" * 64)
    claims = [SeatClaimed(seat, f"bot {seat}", "", bot="strong") for seat in range(4)]
    events = seated(GAME, created, claims, 10)
    record = GameRecord.begin(GAME, created)
    for version, event in enumerate(events[1:], start=2):
        record.apply(version, event, {})
    return record


async def one_game(variant: str, off_loop: bool) -> tuple[list[float], list[float]]:
    """The ticker's lateness and each move's wall time, in seconds."""
    moves.OFF_LOOP = frozenset({"strong"}) if off_loop else frozenset()
    record = table(variant)
    late: list[float] = []
    spent: list[float] = []
    playing = True

    async def ticker() -> None:
        while playing:
            asked = time.perf_counter()
            await asyncio.sleep(TICK)
            late.append(time.perf_counter() - asked - TICK)

    ticking = asyncio.create_task(ticker())
    await asyncio.sleep(TICK)
    while not record.finished:
        assert record.decider is not None
        seat = min(record.decider.status(record.state).to_act)
        started = time.perf_counter()
        decided: Any = moves.bot_move(GAME, seat, "strong", 10).decide(
            record, Actor(f"seat:{seat}", seat)
        )
        if inspect.isawaitable(decided):
            decided = await decided
        spent.append(time.perf_counter() - started)
        for event in decided.events:
            record.apply(record.version + 1, event, decided.metadata)
        await asyncio.sleep(0)
    playing = False
    await ticking
    return late, spent


def quantiles(values: list[float]) -> tuple[float, float, float]:
    ordered = sorted(values)
    return (
        statistics.median(ordered),
        ordered[min(len(ordered) - 1, int(0.99 * len(ordered)))],
        ordered[-1],
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--games", type=int, default=20)
    parser.add_argument("--variant", default="basketball")
    args = parser.parse_args()
    lates: dict[bool, list[float]] = {False: [], True: []}
    spents: dict[bool, list[float]] = {False: [], True: []}
    for game in range(args.games):
        for off_loop in (game % 2 == 0, game % 2 == 1):
            late, spent = asyncio.run(one_game(args.variant, off_loop))
            lates[off_loop].extend(late)
            spents[off_loop].extend(spent)
    print(f"CPU: {cpu_model()}; {args.games} games of four strong bots per mode ({args.variant})")
    figures = {}
    for off_loop in (False, True):
        name = "worker thread" if off_loop else "inline"
        late = [x * 1000 for x in quantiles(lates[off_loop])]
        spent = [x * 1000 for x in quantiles(spents[off_loop])[:2]]
        figures[off_loop] = (*late, *spent)
        print(
            f"{name:>13}: ticker late median {late[0]:.2f} ms, p99 {late[1]:.2f} ms, max "
            f"{late[2]:.2f} ms ({len(lates[off_loop])} ticks); a move median {spent[0]:.2f} "
            f"ms, p99 {spent[1]:.2f} ms ({len(spents[off_loop])} moves)"
        )
    ratios = [off / inline for off, inline in zip(figures[True], figures[False], strict=True)]
    print(
        "thread / inline: late median {:.2f}x, p99 {:.2f}x, max {:.2f}x; a move median "
        "{:.2f}x, p99 {:.2f}x".format(*ratios)
    )


if __name__ == "__main__":
    main()
