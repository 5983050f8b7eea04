"""How much do the strong bot's Basketball choices lose against its seat's best own play?

    python benchmarks/basketball_regret.py [--first 5000] [--games 60] [--turns 6,7]

Benchmark only: nothing here is reachable from the service. It plays `bots_bench.py`'s games
(the same master seeds: the seat under test rotating, three greedy seats), the seat under
test as the strong bot. At every decision of that seat with k face-down cards (k in
`--turns`: its turns left) where it has a choice (the draw, the card's place, the flip), every
legal choice is priced by the exact continuation with every rank followed
(`basketball_dp.Continuation`: the seat's expected final score under its best play over its
remaining draws, exact in its abstraction: odds not depleted, the pile's later cards not
counted). A choice's regret is the best choice's value less its own; 0 when it is a best one.

Printed per k and kind of decision: the mean regret of the strong bot's choice, and of the
continuation following only the ranks the seat holds (`strong:dp=k`), with and without the
mean-field for fresh pairs (`fresh=1`), and how often each is not a best choice. The sum of
the mean regret over a game's decisions is what best own play at that k could add to the
seat's expected total (in the abstraction), an upper bound on what any cheaper price gains
there. The exact continuation costs about 0.3 s a decision at 5 turns left, 1 s at 6, 4 s at
7 and 10-20 s at 8 (2026-12-06, one core); 9 and 10 are out of reach.
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))

from basketball_clair import GAME, GREEDY, STRONG
from basketball_games import seeded_game
from bots_bench import cpu_model

from domain.cards import rank_of
from domain.grid import basketball_dp, strong_basketball
from domain.grid.layout import index
from domain.grid.view import GridView
from events.schema.grid import Discard, Draw, Flip, Peek, Replace

PRICES = ("strong", "held", "held+fresh")
"""The choosers compared: the strong bot as it is, and the continuation following only the
ranks the seat holds, without and with the mean-field for fresh pairs."""


def values(
    view: GridView, legal: Sequence[Any], every_rank: bool, fresh: float
) -> dict[Any, float]:
    """Every legal choice's value by the continuation: following every rank (`every_rank`),
    or the ranks the seat holds with the mean-field `fresh`."""
    saved = (strong_basketball.TRACK, strong_basketball.FOLLOW_ALL, basketball_dp.FRESH)
    if every_rank:
        strong_basketball.TRACK, strong_basketball.FOLLOW_ALL = {}, 99.0
    else:
        strong_basketball.FOLLOW_ALL = 0.0
    basketball_dp.FRESH = fresh
    try:
        pile = view.discard_piles[0]
        choosing_draw = view.drawn is None and not isinstance(legal[0], Flip)
        plan = strong_basketball.BasketballPlan(view, pile[-1] if pile and choosing_draw else None)
        columns = view.rules.columns
        out: dict[Any, float] = {}
        for action in legal:
            if isinstance(action, Flip):
                slot = plan.slot_at[index(columns, action.row, action.col)]
                out[action] = plan.dp.turned(plan.state, slot)
            elif isinstance(action, Draw) and action.source == "stock":
                out[action] = plan.stock()
            elif isinstance(action, Draw) and pile:
                out[action] = plan.best_keep(rank_of(pile[-1]))
            elif isinstance(action, Discard):
                out[action] = max(plan.dp.turned(plan.state, slot) for slot in plan.slots())
            elif isinstance(action, Replace) and view.drawn is not None:
                slot = plan.slot_at[index(columns, action.row, action.col)]
                out[action] = plan.dp.placed(rank_of(view.drawn), plan.state, slot)
        return out
    finally:
        strong_basketball.TRACK, strong_basketball.FOLLOW_ALL, basketball_dp.FRESH = saved


@dataclass(frozen=True, slots=True)
class Decision:
    turns: int
    kind: str
    regret: dict[str, float]
    seconds: float
    """The exact pricing's wall time."""


def turns_left(view: GridView) -> int:
    """The seat's face-down cards: unseen, or peeked at."""
    top, bottom = view.layouts[view.viewer or 0]
    return sum(card is None for card in (*top, *bottom)) + len(view.peeked)


def kind_of(view: GridView, legal: Sequence[Any]) -> str:
    if isinstance(legal[0], Flip):
        return "flip"
    return "place" if view.drawn is not None else "draw"


def measured(first: int, games: int, turns: set[int]) -> list[Decision]:
    found: list[Decision] = []
    for game in range(first, first + games):
        found.extend(one_game(game, turns))
        print(f"game {game}: {len(found)} decisions priced", file=sys.stderr, flush=True)
    return found


def one_game(game: int, turns: set[int]) -> list[Decision]:
    """Game `game` played, the seat under test's decisions at `turns` priced."""
    me = game % 4
    found: list[Decision] = []

    def choose(state: Any, seat: int, legal: tuple[Any, ...], rng: Any) -> Any:
        view = GAME.view(state, seat)
        if seat != me:
            return GREEDY.choose(view, legal, rng)
        choice = STRONG.choose(view, legal, rng)
        if len(legal) > 1 and Peek() not in legal and turns_left(view) in turns:
            started = time.perf_counter()
            exact = values(view, legal, every_rank=True, fresh=0.0)
            seconds = time.perf_counter() - started
            best = max(exact.values())
            picks = {
                "strong": choice,
                "held": _best(values(view, legal, every_rank=False, fresh=0.0)),
                "held+fresh": _best(values(view, legal, every_rank=False, fresh=1.0)),
            }
            regret = {name: best - exact[pick] for name, pick in picks.items()}
            found.append(Decision(turns_left(view), kind_of(view, legal), regret, seconds))
        return choice

    seeded_game(4, 0, game, choose)
    return found


def _best(priced: dict[Any, float]) -> Any:
    return max(priced, key=lambda action: priced[action])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--first", type=int, default=5000)
    parser.add_argument("--games", type=int, default=60)
    parser.add_argument("--turns", default="6,7")
    args = parser.parse_args()
    turns = {int(k) for k in args.turns.split(",")}
    found = measured(args.first, args.games, turns)
    last = args.first + args.games - 1
    print(f"CPU: {cpu_model()}; games {args.first}-{last}, the seat under test's decisions")
    print("turns left | decision | n | per game | " + " | ".join(PRICES) + " | exact's time")
    for k in sorted(turns):
        for kind in ("draw", "place", "flip", "all"):
            rows = [d for d in found if d.turns == k and kind in ("all", d.kind)]
            if not rows:
                continue
            cells = []
            for name in PRICES:
                regrets = [d.regret[name] for d in rows]
                wrong = sum(r > 1e-6 for r in regrets)
                cells.append(f"{statistics.fmean(regrets):.3f} ({wrong} not best)")
            seconds = statistics.median(d.seconds for d in rows)
            print(
                f"{k} | {kind} | {len(rows)} | {len(rows) / args.games:.2f} | "
                + " | ".join(cells)
                + f" | {seconds:.2f} s"
            )


if __name__ == "__main__":
    main()
