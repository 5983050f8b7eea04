"""`fairway simulate`: whole games played in-process by bots, with statistics."""

from __future__ import annotations

import random
import statistics
import time
from collections import defaultdict
from typing import Any

from domain.simulate import GameRecord, play_game
from domain.variants import bot, decider_for
from events.schema.common import GameOptions


def simulate(
    variant: str,
    players: int,
    games: int,
    seed: int,
    bot_kinds: list[str],
    options: GameOptions | None = None,
) -> dict[str, Any]:
    decider = decider_for(variant)
    kinds = [bot_kinds[seat % len(bot_kinds)] for seat in range(players)]
    bots = [bot(kind, variant) for kind in kinds]
    rng = random.Random(seed)
    records: list[GameRecord] = []
    started = time.perf_counter()
    for game in range(games):
        master = seed.to_bytes(8, "big", signed=True) + game.to_bytes(8, "big")
        records.append(play_game(decider, players, bots, master, rng, options))
    elapsed = time.perf_counter() - started
    return summarise(variant, players, kinds, records, elapsed)


def summarise(
    variant: str, players: int, kinds: list[str], records: list[GameRecord], elapsed: float
) -> dict[str, Any]:
    wins: dict[str, float] = defaultdict(float)
    finals: dict[str, list[int]] = defaultdict(list)
    for record in records:
        for seat in record.winners:
            wins[kinds[seat]] += 1 / len(record.winners)
        for seat, total in enumerate(record.totals):
            finals[kinds[seat]].append(total)
    games = len(records)
    turns = [t for r in records for t in r.turns_per_hand]
    actions = [a for r in records for a in r.actions_per_hand]
    seats_per_kind = {kind: kinds.count(kind) for kind in set(kinds)}
    return {
        "variant": variant,
        "players": players,
        "games": games,
        "hands": sum(r.hands for r in records),
        "hands_per_game": statistics.fmean(r.hands for r in records),
        "turns_per_hand": statistics.fmean(turns),
        "actions_per_hand": statistics.fmean(actions),
        "events": sum(len(r.events) for r in records),
        "seconds": round(elapsed, 4),
        "games_per_second": round(games / elapsed, 2) if elapsed else None,
        "seats": kinds,
        "wins": {kind: round(wins[kind], 3) for kind in sorted(seats_per_kind)},
        "win_share": {kind: round(wins[kind] / games, 4) for kind in sorted(seats_per_kind)},
        "win_share_per_seat": {
            kind: round(wins[kind] / games / seats_per_kind[kind], 4)
            for kind in sorted(seats_per_kind)
        },
        "mean_final_total": {
            kind: round(statistics.fmean(finals[kind]), 2) for kind in sorted(seats_per_kind)
        },
    }


def render(summary: dict[str, Any]) -> str:
    lines = [
        f"{summary['variant']}, {summary['players']} players: {summary['games']} games "
        f"in {summary['seconds']} s ({summary['games_per_second']} games/s)",
        f"  hands per game   {summary['hands_per_game']:.2f}",
        f"  turns per hand   {summary['turns_per_hand']:.2f}"
        f"  (actions per hand {summary['actions_per_hand']:.2f})",
        f"  seats            {', '.join(summary['seats'])}",
        "  bot      mean final total   wins    win share   per seat",
    ]
    for kind in summary["wins"]:
        lines.append(
            f"  {kind:<8} {summary['mean_final_total'][kind]:>16}   "
            f"{summary['wins'][kind]:>6}  {summary['win_share'][kind]:>9.2%}"
            f"   {summary['win_share_per_seat'][kind]:>7.2%}"
        )
    return "\n".join(lines)
