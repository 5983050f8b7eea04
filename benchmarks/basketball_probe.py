"""A correction to the Basketball price from paired playouts of a decision's alternatives
(tried, not kept).

    python benchmarks/basketball_probe.py --games 1500 [--first 20000] [--seed 7]
        [--chance 0.5] --save probes.jsonl
    python benchmarks/basketball_probe.py --load probes.jsonl [--out table.json]

Benchmark only. Where `basketball_learn.py` fits the final total of the games the bot played
(what a layout was worth under its play, which need not say which of two layouts one turn
may leave is better), this fits the difference the choice made. Training games as there
(seed 7, games of their own, the strong seat rotating against three greedy seats); at a
place or flip decision of the strong seat, with chance `--chance`, each of the price's best
three distinct choices is played out to the game's end from the TRUE state with the same
copy of the game's random stream (the same stock, the same coin flips: common random
numbers), the seat by the bot itself (price alone), the others greedy. The game itself
goes on with the bot's choice. A discard's layout is the one its best flip leaves.

For each probe and each alternative to the price's choice: the difference in the seat's
final total, plus the difference in price (as cost), is fitted by least squares on the
difference in `features` (basketball_features.py), no intercept, per band of face-down
cards left (`--pooled`: one row for all; `--used`: a subset of the features); the bot of
commit `4b271b1` read the pooled table as `WEIGHTS` in domain/grid/strong_learned.py.
`--holdout` fits the even games' probes and prints, on the odd games', the error of the
differences and what the corrected choice among the three played out would have changed
(an offline estimate of the correction's worth, one decision at a time). The playouts see
cards the seat cannot see; that is fair here: the true deal is a draw from what the seat may
believe, so a playout's outcome is an unbiased sample of what the choice is worth.
"""

from __future__ import annotations

import argparse
import json
import random
import sys
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))

from basketball_clair import GAME, GREEDY, STRONG
from basketball_features import FEATURES, features, parts
from basketball_fit import solve
from basketball_games import advance, master_seed, played_out, seeded_game
from basketball_learn import choices

from domain.grid import strong
from domain.grid.state import GridState
from domain.grid.strong import Plan
from events.schema.common import Act
from events.schema.grid import Discard, Flip, Replace

BANDS = {1: 1, 2: 2, 3: 3, 4: 4, 5: 5, 6: 6, 7: 7, 8: 7, 9: 7}
"""Face-down cards left -> the band whose row of the table it uses (8 and 9 pooled with 7)."""
POOLED = dict.fromkeys(range(1, 10), 1)


def finish(state: GridState, me: int, rng: random.Random, master: bytes) -> tuple[int, ...]:
    """Play on to the end: `me` by the strong bot, the others greedy; the final totals."""

    def choose(state: GridState, seat: int, legal: tuple[Any, ...], rng: random.Random) -> Any:
        bot = STRONG if seat == me else GREEDY
        return bot.choose(GAME.view(state, seat), legal, rng)

    return played_out(state, master, rng, choose).totals


def described(plan: Plan, cost: float, action: Any, post: Any) -> tuple[int, list[float], float]:
    """k, the features and the price (cost, no correction) of the layout a choice leaves."""
    if post is None:  # a discard: the flip that follows as the price would make it
        flips = [c for c in choices(plan, tuple(_flips(plan))) if c[2] is not None]
        post = flips[0][2]
    ranks, open_ = post
    base, saving = parts(plan.know, ranks, open_)
    price = base - strong.BASKETBALL_LOOK_AHEAD * saving
    return len(open_), list(features(plan.know, ranks, open_, saving)), price


def _flips(plan: Plan) -> list[Flip]:
    columns = plan.rules.columns
    return [Flip(at // columns, at % columns) for at in plan.hidden]


def play(job: tuple[int, int, int, float]) -> list[dict[str, Any]]:
    players, seed, game, chance = job
    me = game % players
    master = master_seed(seed, game)
    coin = random.Random(seed * 104729 + game)
    probes: list[dict[str, Any]] = []

    def choose(state: GridState, seat: int, legal: tuple[Any, ...], rng: random.Random) -> Any:
        view = GAME.view(state, seat)
        if seat != me:
            return GREEDY.choose(view, legal, rng)
        placing = view.drawn is not None and any(isinstance(a, Replace | Discard) for a in legal)
        probing = placing or isinstance(legal[0], Flip)
        if len(legal) == 1 or not probing or coin.random() >= chance:
            return STRONG.choose(view, legal, rng)
        plan = Plan(view)
        ranked = choices(plan, legal)[:3]
        if len(ranked) < 2:
            return STRONG.choose(view, legal, rng)
        rows = []
        for cost, action, post in ranked:
            k, feats, price = described(plan, cost, action, post)
            copy = random.Random()
            copy.setstate(rng.getstate())
            totals = finish(advance(state, Act(seat, action)), me, copy, master)
            rows.append([k, feats, price, totals[me]])
        probes.append({"game": game, "rows": rows})
        return STRONG.choose(view, legal, rng)

    seeded_game(players, seed, game, choose)
    return probes


def differences(
    probes: list[dict[str, Any]], bands: dict[int, int], used: tuple[int, ...]
) -> dict[int, list[tuple[list[float], float]]]:
    """Per band: (the alternative's features less the choice's, the features `used` only;
    its final total less the choice's plus its price less the choice's)."""
    by_band: dict[int, list[tuple[list[float], float]]] = {}
    for probe in probes:
        (k, f0, c0, y0), *others = probe["rows"]
        for _, f, c, y in others:
            dx = [f[i] - f0[i] for i in used]
            if k in bands:
                by_band.setdefault(bands[k], []).append((dx, (y - y0) + (c - c0)))
    return by_band


def fit(
    probes: list[dict[str, Any]], bands: dict[int, int], used: tuple[int, ...]
) -> dict[int, tuple[float, ...]]:
    """The table: per k, a weight for every feature (0 for those not `used`)."""
    by_band = differences(probes, bands, used)
    table: dict[int, tuple[float, ...]] = {}
    for band in sorted(by_band):
        coef, err = solve(by_band[band])  # no intercept: the first column is a feature
        pairs = zip([FEATURES[i] for i in used], coef, err, strict=True)
        shown = ", ".join(f"{n} {c:+.3f}+-{e:.3f}" for n, c, e in pairs)
        print(f"band {band} ({len(by_band[band])} differences): {shown}", flush=True)
        row = [0.0] * len(FEATURES)
        for i, c in zip(used, coef, strict=True):
            row[i] = round(c, 3)
        table[band] = tuple(row)
    return {k: table[b] for k, b in bands.items() if b in table}


def holdout(probes: list[dict[str, Any]], bands: dict[int, int], used: tuple[int, ...]) -> None:
    """Fit on the even games' probes; on the odd games', the mean squared error of the
    difference with the price alone (0) and with the correction."""
    train = [p for p in probes if p["game"] % 2 == 0]
    test = [p for p in probes if p["game"] % 2 == 1]
    table = fit(train, bands, used)
    alone = fitted = 0.0
    n = 0
    for k, rows in differences(test, {k: k for k in bands}, tuple(range(len(FEATURES)))).items():
        for dx, dy in rows:
            guess = sum(w * x for w, x in zip(table.get(k, ()), dx, strict=False))
            alone += dy * dy
            fitted += (dy - guess) ** 2
            n += 1
    print(
        f"held out ({n} differences): mse {alone / n:.3f} price alone, {fitted / n:.3f} corrected"
    )
    changed = gained = 0.0
    for probe in test:
        rows = probe["rows"]
        weights = table.get(rows[0][0], (0.0,) * len(FEATURES))

        def value(row: list[Any], w: tuple[float, ...] = weights) -> float:
            price: float = row[2]
            feats: list[float] = row[1]
            return -price + sum(a * b for a, b in zip(w, feats, strict=True))

        pick = max(rows, key=value)
        if pick is not rows[0]:
            changed += 1
            gained += pick[3] - rows[0][3]
    print(
        f"held out, the corrected choice among the three played out: changed at {changed:.0f} "
        f"of {len(test)} decisions, final total {gained / len(test):+.3f} a decision "
        f"({gained / max(changed, 1):+.3f} where changed)"
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--games", type=int, default=0)
    parser.add_argument("--first", type=int, default=20000)
    parser.add_argument("--seed", type=int, default=7)
    parser.add_argument("--players", type=int, default=4)
    parser.add_argument("--chance", type=float, default=0.5)
    parser.add_argument("--save", help="append the probes to this file (JSON lines)")
    parser.add_argument("--load", action="append", default=[], help="fit these probes too")
    parser.add_argument("--holdout", action="store_true", help="also fit even, test odd games")
    parser.add_argument("--pooled", action="store_true", help="one row for every k")
    parser.add_argument("--used", default="0,1,2,3,4,5,6", help="the features fitted (indices)")
    parser.add_argument("--out", help="write the fitted table here (JSON)")
    args = parser.parse_args()
    probes: list[dict[str, Any]] = []
    for name in args.load:
        probes.extend(json.loads(line) for line in Path(name).read_text().splitlines() if line)
    if args.games:
        with open(args.save or "/dev/null", "a") as out:
            for game in range(args.first, args.first + args.games):
                for probe in play((args.players, args.seed, game, args.chance)):
                    out.write(json.dumps(probe) + "\n")
                    probes.append(probe)
                out.flush()
    print(f"{len(probes)} probes", flush=True)
    bands = POOLED if args.pooled else BANDS
    used = tuple(int(i) for i in args.used.split(","))
    if probes and args.holdout:
        holdout(probes, bands, used)
    if probes:
        table = fit(probes, bands, used)
        print("WEIGHTS =", table)
        if args.out:
            Path(args.out).write_text(json.dumps(table))


if __name__ == "__main__":
    main()
