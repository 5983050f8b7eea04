"""Learn a correction to the strong bot's Basketball price from its final totals (tried, not kept).

    python benchmarks/basketball_learn.py --games 4000 [--first 10000] [--seed 7]
        [--epsilon 0.2] --save games.jsonl
    python benchmarks/basketball_learn.py --load games.jsonl [--load more.jsonl] [--target total]

Benchmark only. Plays `bots_bench.py`'s kind of game (the strong seat rotating, three greedy
seats) on deals of a seed no evaluation uses. At each of the strong seat's place and flip
decisions it prices every distinct choice as the bot does (`Plan.cost`), and takes the
best, or with chance `--epsilon` a random one of the best three, from a stream of its own
(the game's own rng is left as the bot leaves it). When the choice ends the turn (a card
kept, a card turned up) it records the layout left: its face-down count k, its `features`
(basketball_features.py), its price, and what the features are computed from (so that
another definition of them can be fitted on the same games).
At the game's end every record gets the seat's final total, its margin over the greedy
seats' mean and its share of the win. Each game is one line of `--save`.

The fit: for each k, the target (`total`: the final total less the price's estimate, i.e.
plus the price as a cost; `margin`: the margin likewise) by least squares on an intercept
and the features. Prints the coefficients with their standard errors and the table (the
intercept dropped: every choice of a turn leaves the same k), which the bot of commit
`defa997` read as `WEIGHTS` in domain/grid/strong_learned.py, taking it from the price.
`--holdout` fits the even games and prints each k's error on the odd ones. Fitting is
deterministic: the same games give the same table.
"""

from __future__ import annotations

import argparse
import json
import multiprocessing
import random
import sys
from pathlib import Path
from typing import Any, cast

sys.path.insert(0, str(Path(__file__).resolve().parent))

from basketball_clair import GAME, GREEDY, STRONG
from basketball_features import FEATURES, features, parts
from basketball_fit import solve
from basketball_games import seeded_game

from domain.cards import rank_of
from domain.grid import strong
from domain.grid.layout import index
from domain.grid.scoring import VALUES
from domain.grid.state import GridState
from domain.grid.strong import Plan
from domain.grid.strong_eval import Knowledge
from events.schema.grid import Discard, Flip, Replace

Post = tuple[list[str | None], list[int]] | None
"""The layout a choice leaves and its face-down positions (None: a discard, a flip to come)."""


def choices(plan: Plan, legal: tuple[Any, ...]) -> list[tuple[float, Any, Post]]:
    """Every distinct place or flip choice with its price as the bot counts it, best first
    (ties in the order of `legal`, as the bot breaks them)."""
    view, ranks, hidden = plan.view, plan.ranks, plan.hidden
    columns = view.rules.columns
    plan.looking = True
    seen: set[Any] = set()
    out: list[tuple[float, Any, Post]] = []
    for action in legal:
        post: Post = None
        if isinstance(action, Discard):
            key: Any = "discard"
            stock = view.drawn_from == "stock"
            cost = plan.after_flip(ranks, hidden) if stock else plan.cost(ranks)
        elif isinstance(action, Replace | Flip):
            at = index(columns, action.row, action.col)
            key = (type(action), ranks[at])
            after = list(ranks)
            if isinstance(action, Replace):
                assert view.drawn is not None
                after[at] = rank_of(view.drawn)
            post = (after, [h for h in hidden if h != at])
            cost = plan.cost(*post)
        else:
            continue
        if key not in seen:
            seen.add(key)
            out.append((cost, action, post))
    out.sort(key=lambda c: c[0])
    return out


def play(job: tuple[int, int, int, float]) -> dict[str, Any]:
    players, seed, game, epsilon = job
    me = game % players
    explore = random.Random(seed * 7919 + game)
    records: list[tuple[int, list[float], float, list[Any]]] = []

    def choose(state: GridState, seat: int, legal: tuple[Any, ...], rng: random.Random) -> Any:
        view = GAME.view(state, seat)
        if seat != me:
            return GREEDY.choose(view, legal, rng)
        placing = view.drawn is not None and any(isinstance(a, Replace | Discard) for a in legal)
        if len(legal) == 1 or not (placing or isinstance(legal[0], Flip)):
            return STRONG.choose(view, legal, rng)
        plan = Plan(view)
        ranked = choices(plan, legal)
        pick = ranked[0]
        if explore.random() < epsilon:
            pick = ranked[explore.randrange(min(3, len(ranked)))]
        post = pick[2]
        if post is not None:
            ranks, open_ = post
            base, saving = parts(plan.know, ranks, open_)
            price = base - strong.BASKETBALL_LOOK_AHEAD * saving
            feats = list(features(plan.know, ranks, open_, saving))
            odds = {r: round(p, 5) for r, p in plan.know.odds.items()}
            records.append((len(open_), feats, price, [saving, ranks, open_, odds]))
        return pick[1]

    state = seeded_game(players, seed, game, choose)
    totals = state.totals
    others = [t for s, t in enumerate(totals) if s != me]
    win = 1 / len(state.winners) if me in state.winners else 0.0
    margin = totals[me] - sum(others) / len(others)
    return {"game": game, "total": totals[me], "margin": margin, "win": win, "records": records}


class Odds:
    """What `features` reads of a seat's knowledge, from the odds a record kept."""

    def __init__(self, odds: dict[str, float]) -> None:
        self.values = VALUES["basketball"]
        self.odds = odds
        self.pair_odds = sum(p * p for p in odds.values())


def rows_by_k(
    games: list[dict[str, Any]], target: str
) -> dict[int, list[tuple[list[float], float]]]:
    """Each record as ([1, features...], the target less the price's estimate), by k."""
    by_k: dict[int, list[tuple[list[float], float]]] = {}
    for g in games:
        for k, _, price, (saving, ranks, open_, odds) in g["records"]:
            know = cast(Knowledge, Odds(odds))
            feats = features(know, ranks, open_, saving)  # as the module counts them now
            by_k.setdefault(k, []).append(([1.0, *feats], g[target] + price))
    return by_k


def holdout(games: list[dict[str, Any]], target: str) -> None:
    """Fit on the even games, and print for the odd ones each k's mean squared error of the
    target with the price alone (and a constant) and with the correction."""
    train = rows_by_k([g for g in games if g["game"] % 2 == 0], target)
    test = rows_by_k([g for g in games if g["game"] % 2 == 1], target)
    for k in sorted(set(train) & set(test)):
        coef, _ = solve(train[k])
        mean = sum(y for _, y in train[k]) / len(train[k])
        alone = sum((y - mean) ** 2 for _, y in test[k]) / len(test[k])
        fitted = sum(
            (y - sum(c * v for c, v in zip(coef, x, strict=True))) ** 2 for x, y in test[k]
        )
        print(f"held out k={k}: mse {alone:.2f} price alone, {fitted / len(test[k]):.2f} corrected")


def fit(games: list[dict[str, Any]], target: str) -> dict[int, tuple[float, ...]]:
    by_k = rows_by_k(games, target)
    table: dict[int, tuple[float, ...]] = {}
    for k in sorted(by_k):
        if k == 0:
            continue
        coef, err = solve(by_k[k])
        table[k] = tuple(round(c, 3) for c in coef[1:])
        shown = ", ".join(
            f"{n} {c:+.3f}+-{e:.3f}"
            for n, c, e in zip(("intercept", *FEATURES), coef, err, strict=True)
        )
        print(f"k={k} ({len(by_k[k])}): {shown}", flush=True)
    return table


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--games", type=int, default=0)
    parser.add_argument("--first", type=int, default=10000)
    parser.add_argument("--seed", type=int, default=7)
    parser.add_argument("--players", type=int, default=4)
    parser.add_argument("--epsilon", type=float, default=0.2)
    parser.add_argument("--processes", type=int, default=1)
    parser.add_argument("--save", help="append the games played to this file (JSON lines)")
    parser.add_argument("--load", action="append", default=[], help="fit these games too")
    parser.add_argument("--target", default="total", choices=("total", "margin"))
    parser.add_argument("--holdout", action="store_true", help="also fit even, test odd games")
    parser.add_argument("--out", help="write the fitted table here (JSON)")
    args = parser.parse_args()
    games: list[dict[str, Any]] = []
    for name in args.load:
        games.extend(json.loads(line) for line in Path(name).read_text().splitlines() if line)
    if args.games:
        span = range(args.first, args.first + args.games)
        jobs = [(args.players, args.seed, g, args.epsilon) for g in span]
        save = open(args.save or "/dev/null", "a")  # noqa: SIM115
        with multiprocessing.Pool(args.processes) as pool, save as out:
            for row in pool.imap(play, jobs, chunksize=8):
                out.write(json.dumps(row) + "\n")
                out.flush()
                games.append(row)
    print(f"{len(games)} games", flush=True)
    if games and args.holdout:
        holdout(games, args.target)
    if games:
        table = fit(games, args.target)
        print("WEIGHTS =", table)
        if args.out:
            Path(args.out).write_text(json.dumps(table))


if __name__ == "__main__":
    main()
