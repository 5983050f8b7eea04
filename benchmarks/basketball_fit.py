"""What the strong bot's Basketball positions turned out to be worth: a least-squares fit.

    python benchmarks/basketball_fit.py [--games 4000] [--seed 7] [--processes 2]

Benchmark only. Plays `bots_bench.py`'s kind of game (the strong seat rotating, three greedy
seats; a seed of its own, so that the fit never sees the deals the bot is measured on) and
records, at the start of each of the strong seat's turns, the parts of the price its plan
puts on its layout (`domain/grid/strong_eval.py`), and at the end the seat's final total.
In Basketball a seat with k face-down cards has exactly k turns left, so each game gives one
position for every k from 10 to 1. For every k, the part of the final total the plain
arithmetic does not explain (the total less the known cards' exact worth and each unseen
card's expected worth) is fitted, by least squares, on

- the number of unseen face-down cards (what `BASKETBALL_UNSEEN_BONUS` prices),
- the peeked face-down cards' mean gain of one draw over them, summed (`BASKETBALL_OPTION`,
  before its scale),
- what the seat's next draw is expected to save (the look-ahead's saving),

and an intercept (which decides nothing: every choice of a turn leaves as many face-down
cards). Prints each k's coefficients with their standard errors, and the Python table the
bot could read.
"""

from __future__ import annotations

import argparse
import json
import multiprocessing
import random
import statistics
import sys
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))

from basketball_clair import GAME, GREEDY, STRONG
from basketball_games import seeded_game

from domain.grid.state import GridState
from domain.grid.strong import Plan
from domain.grid.strong_eval import _group_worth
from domain.grid.strong_outlook import basketball_outlook
from events.schema.grid import Draw, Peek

NAMES = ("intercept", "unseen", "option gain", "saving")


def parts(plan: Plan) -> tuple[int, list[float], float]:
    """The face-down count, the regressors, and the plain arithmetic's worth of the layout."""
    know, ranks, hidden = plan.know, plan.ranks, plan.hidden
    values, odds = know.values, know.odds
    counts: dict[str, int] = {}
    for rank in ranks:
        if rank is not None:
            counts[rank] = counts.get(rank, 0) + 1
    known = sum(_group_worth(r, n, values[r]) for r, n in counts.items())
    unseen = sum(rank is None for rank in ranks)
    adds = 0.0
    for r, p in odds.items():
        n = counts.get(r, 0)
        adds += p * (_group_worth(r, n + 1, values[r]) - _group_worth(r, n, values[r]))
    gain = 0.0
    for at in hidden:
        rank = ranks[at]
        if rank is not None:
            n, value = counts[rank], values[rank]
            worth = _group_worth(rank, n, value) - _group_worth(rank, n - 1, value)
            gain += sum(p * max(0, values[r] - worth) for r, p in odds.items())
    base = know.cost(ranks, open_=hidden)
    saving = base - basketball_outlook(know, ranks, hidden, 1.0)
    return len(hidden), [1.0, float(unseen), gain, saving], known + unseen * adds


def play(job: tuple[int, int, int]) -> list[tuple[int, list[float], float]]:
    """One game; for each of the strong seat's turns its regressors and unexplained total."""
    players, seed, game = job
    me = game % players
    seen: list[tuple[int, list[float], float]] = []

    def choose(state: GridState, seat: int, legal: tuple[Any, ...], rng: random.Random) -> Any:
        view = GAME.view(state, seat)
        if seat != me:
            return GREEDY.choose(view, legal, rng)
        if Draw("stock") in legal and Peek() not in legal:
            seen.append(parts(Plan(view)))
        return STRONG.choose(view, legal, rng)

    state = seeded_game(players, seed, game, choose)
    final = state.totals[me]
    return [(k, x, final - plain) for k, x, plain in seen]


def solve(rows: list[tuple[list[float], float]]) -> tuple[list[float], list[float]]:
    """Least squares by the normal equations; the coefficients and their standard errors.
    A regressor that never varies (no peeked card left, say) is dropped (coefficient 0)."""
    width = len(rows[0][0])
    used = [j for j in range(width) if j == 0 or statistics.pstdev(x[j] for x, _ in rows) > 1e-9]
    a = [[sum(x[i] * x[j] for x, _ in rows) for j in used] for i in used]
    b = [sum(x[i] * y for x, y in rows) for i in used]
    n = len(used)
    inverse = [[float(i == j) for j in range(n)] for i in range(n)]
    for col in range(n):
        pivot = max(range(col, n), key=lambda r: abs(a[r][col]))
        a[col], a[pivot] = a[pivot], a[col]
        inverse[col], inverse[pivot] = inverse[pivot], inverse[col]
        lead = a[col][col]
        if abs(lead) < 1e-12:
            raise SystemExit(
                f"the fit is singular: {len(rows)} positions are too few to tell its "
                f"{n} regressors apart; run more games"
            )
        a[col] = [v / lead for v in a[col]]
        inverse[col] = [v / lead for v in inverse[col]]
        for r in range(n):
            if r != col and a[r][col]:
                f = a[r][col]
                a[r] = [v - f * w for v, w in zip(a[r], a[col], strict=True)]
                inverse[r] = [v - f * w for v, w in zip(inverse[r], inverse[col], strict=True)]
    beta = [sum(inverse[i][j] * b[j] for j in range(n)) for i in range(n)]
    residuals = [y - sum(beta[i] * x[used[i]] for i in range(n)) for x, y in rows]
    sigma2 = sum(r * r for r in residuals) / max(1, len(rows) - n)
    coef, err = [0.0] * width, [0.0] * width
    for i, j in enumerate(used):
        coef[j], err[j] = beta[i], (sigma2 * inverse[i][i]) ** 0.5
    return coef, err


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--games", type=int, default=4000)
    parser.add_argument("--seed", type=int, default=7)
    parser.add_argument("--players", type=int, default=4)
    parser.add_argument("--processes", type=int, default=2)
    parser.add_argument("--save", help="keep the positions in this file (JSON)")
    parser.add_argument("--load", help="fit the positions kept in this file instead of playing")
    args = parser.parse_args()
    if args.load:
        games = json.loads(Path(args.load).read_text())
    else:
        jobs = [(args.players, args.seed, game) for game in range(args.games)]
        with multiprocessing.Pool(args.processes) as pool:
            games = pool.map(play, jobs, chunksize=max(1, args.games // 40))
    if args.save:
        Path(args.save).write_text(json.dumps(games))
    by_k: dict[int, list[tuple[list[float], float]]] = {}
    for game in games:
        for k, x, y in game:
            by_k.setdefault(k, []).append((x, y))
    tables: dict[str, dict[int, tuple[float, ...]]] = {}
    for part, title, width in (
        ("place", "with the look-ahead's saving", 4),
        ("draw", "without it (the draw)", 3),
    ):
        table = tables.setdefault(part, {})
        print(title)
        for k in sorted(by_k):
            coef, err = solve([(x[:width], y) for x, y in by_k[k]])
            table[k] = tuple(round(c, 3) for c in coef[1:]) + (0.0,) * (4 - width)
            shown = ", ".join(
                f"{n} {c:+.3f} +- {e:.3f}" for n, c, e in zip(NAMES, coef, err, strict=False)
            )
            print(f"k={k:2d} ({len(by_k[k])} positions): {shown}", flush=True)
        print("table:", table)


if __name__ == "__main__":
    main()
