"""How well could ANY bot do in Basketball against three greedy bots? A measured upper bound.

    python benchmarks/basketball_bound.py [--games 1000] [--seed 0] [--processes 2]
                                          [--levels greedy,clair-greedy,clair-rollout]

Benchmark only: nothing here is reachable from the service. The seat under test rotates game
by game over the very games `bots_bench.py` plays (the same master seeds, hence the same
deals), the other three seats are the greedy bot, and the seat under test is one of:

- `greedy`: the greedy bot itself (the parity check: its win rate should be 25%), which also
  gives the seat effect (win rate by seat of the four greedy seats);
- `strong`: the strong bot (domain/grid/strong.py), for comparison on the same deals;
- `clair-greedy`: greedy with perfect information: it knows its own face-down cards and the
  card the stock will give (the reshuffled stock included), keeps a card where it adds most
  to its exact score, takes the discard pile's card when it adds more than the stock's, and
  turns up the card it would least want to lose;
- `clair-rollout`: a perfect-information search: every distinct choice of every decision
  (by the rank it touches: positions do not matter in Basketball) is played to the hand's
  end from the TRUE state, with the game's own random stream copied (so it also foresees
  the greedy seats' random flips and reads their face-down cards), the other seats as the
  greedy bot they are, its own later decisions by `clair-greedy`; the choice with the best
  outcome (a win, then the margin over the best other seat) is taken. It knows everything
  there is to know; it is a one-step rollout, so it is a lower bound on the clairvoyant
  optimum, but a policy at least as good as its base policy on every deal.

Prints, for each level, the seat's win rate with its 95% Wilson interval and the ratio to
parity, its mean total and margin over the greedy seats' mean, and per-seat win rates.

Common random numbers: every level plays the same deals, so two levels are best compared
game by game. Each level after the first is printed PAIRED against the first: the mean of
the per-game differences in points over the greedy seats' mean and in wins, with the
standard error of those differences (far smaller than either level's own when the levels
play alike). `--save FILE` keeps the per-game results; `--against FILE` pairs every level
with the first level saved there (a run of another tree: `PYTHONPATH=<its checkout>`).
A level `strong:option=3:ramp=2` is the strong bot with those constants (`KNOBS`).
"""

from __future__ import annotations

import argparse
import json
import multiprocessing
import random
import statistics
import sys
import time
from pathlib import Path
from typing import Any

from msgspec.structs import replace

sys.path.insert(0, str(Path(__file__).resolve().parent))

from basketball_clair import (
    COLUMNS,
    GAME,
    GREEDY,
    STRONG,
    clair_greedy,
    clair_own,
    hidden_positions,
    strong_stock,
)
from basketball_games import advance, master_seed, paired, played_out, seeded_game, tuned
from bots_bench import cpu_model, wilson

from domain.cards import rank_of
from domain.grid.layout import index
from domain.grid.state import GridState
from events.schema.common import Act
from events.schema.grid import Flip, Replace


def options(state: GridState, seat: int, legal: tuple[Any, ...], told: bool = True) -> list[Any]:
    """One action per distinct outcome: positions do not matter in Basketball, ranks do.
    `told`: the seat knows every card's rank; else only its peeked cards', and any unseen
    card is one choice (the choices a fair seat can tell apart)."""
    seen: set[Any] = set()
    out = []
    for action in legal:
        if isinstance(action, Replace | Flip):
            at = index(COLUMNS, action.row, action.col)
            known = told or state.peeked[seat] >> at & 1
            key: Any = (type(action), rank_of(state.layouts[seat][at]) if known else None)
        else:
            key = action
        if key not in seen:
            seen.add(key)
            out.append(action)
    return out


def finish(state: GridState, me: int, rng: random.Random, master: bytes) -> tuple[int, ...]:
    """Play on to the end: the others greedy, `me` by clair-greedy; the final totals."""

    def choose(state: GridState, seat: int, legal: tuple[Any, ...], rng: random.Random) -> Any:
        if seat == me:
            return clair_greedy(state, seat, legal)
        return GREEDY.choose(GAME.view(state, seat), legal, rng)

    return played_out(state, master, rng, choose).totals


def outcome(totals: tuple[int, ...], me: int) -> float:
    others = [t for s, t in enumerate(totals) if s != me]
    best = max(others)
    share = 0.0
    if totals[me] > best:
        share = 1.0
    elif totals[me] == best:
        share = 1.0 / (1 + others.count(best))
    return 1000 * share + totals[me] - best


def clair_rollout(
    state: GridState, seat: int, legal: tuple[Any, ...], rng: random.Random, master: bytes
) -> Any:
    choices = options(state, seat, legal)
    if len(choices) == 1:
        return choices[0]
    best, best_value = choices[0], -1e9
    for action in choices:
        copy = random.Random()
        copy.setstate(rng.getstate())
        after = advance(state, Act(seat, action))
        value = outcome(finish(after, seat, copy, master), seat)
        if value > best_value:
            best, best_value = action, value
    return best


def sampled_world(state: GridState, me: int, rng: random.Random) -> GridState:
    """The true state with the other seats' face-down cards dealt anew among them: what a
    seat that knows its own cards and the stock, but not the others' cards, may imagine."""
    spots = [(s, at) for s in range(state.players) if s != me for at in hidden_positions(state, s)]
    pool = [state.layouts[s][at] for s, at in spots]
    rng.shuffle(pool)
    layouts = [list(layout) for layout in state.layouts]
    for (s, at), card in zip(spots, pool, strict=True):
        layouts[s][at] = card
    return replace(state, layouts=tuple(tuple(layout) for layout in layouts))


def own_rollout(
    state: GridState, seat: int, legal: tuple[Any, ...], rng: random.Random, master: bytes
) -> Any:
    """As `clair_rollout`, knowing only its own cards and the stock: WORLDS deals of the
    other seats' face-down cards, their random flips from a stream of its own."""
    choices = options(state, seat, legal)
    if len(choices) == 1:
        return choices[0]
    mine = random.Random(rng.getrandbits(64))
    worlds = [(sampled_world(state, seat, mine), mine.getrandbits(64)) for _ in range(WORLDS)]
    best, best_value = choices[0], -1e9
    for action in choices:
        value = 0.0
        for world, stream in worlds:
            after = advance(world, Act(seat, action))
            value += outcome(finish(after, seat, random.Random(stream), master), seat)
        if value > best_value:
            best, best_value = action, value
    return best


WORLDS = 4


def fair_world(state: GridState, me: int, rng: random.Random) -> GridState:
    """A deal consistent with what seat `me` sees: its own unseen cards, the stock, the other
    seats' face-down cards dealt anew from the pool of all of them; a new seed for any
    reshuffle. Every other seat is taken to have peeked (the greedy bot peeks first)."""
    spots: list[tuple[int, int]] = []
    for s in range(state.players):
        known = state.peeked[s] if s == me else 0
        spots.extend((s, at) for at in hidden_positions(state, s) if not known >> at & 1)
    stock = list(state.stock[state.top :])
    pool = [state.layouts[s][at] for s, at in spots] + stock
    rng.shuffle(pool)
    layouts = [list(layout) for layout in state.layouts]
    for (s, at), card in zip(spots, pool, strict=False):
        layouts[s][at] = card
    new_stock = state.stock[: state.top] + tuple(pool[len(spots) :])
    peeked = tuple(p if s == me else p | (0b11111 << COLUMNS) for s, p in enumerate(state.peeked))
    return replace(
        state,
        layouts=tuple(tuple(layout) for layout in layouts),
        stock=new_stock,
        peeked=peeked,
        seed=rng.getrandbits(256).to_bytes(32, "big").hex(),
        stream_position=0,
    )


def margin(totals: tuple[int, ...], me: int) -> float:
    """The seat's total less the best other seat's."""
    return totals[me] - max(t for s, t in enumerate(totals) if s != me)


def fair_pimc(
    state: GridState,
    seat: int,
    legal: tuple[Any, ...],
    rng: random.Random,
    master: bytes,
    judge: Any = outcome,
) -> Any:
    """Perfect-information Monte Carlo from the seat's own knowledge: FAIR_WORLDS deals
    consistent with its view, each choice played to the end in each (the others greedy, the
    seat by clair-greedy within the world), the best mean outcome taken."""
    choices = options(state, seat, legal, told=False)
    if len(choices) == 1:
        return choices[0]
    worlds = [(fair_world(state, seat, rng), rng.getrandbits(64)) for _ in range(FAIR_WORLDS)]
    best, best_value = choices[0], -1e9
    for action in choices:
        value = 0.0
        for world, stream in worlds:
            after = advance(world, Act(seat, action))
            totals = finish(after, seat, random.Random(stream), master)
            value += judge(totals, seat)
        if value > best_value:
            best, best_value = action, value
    return best


FAIR_WORLDS = 8


def play(job: tuple[str, int, int, int]) -> dict[str, Any]:
    """One of bots_bench's games with the seat under test at `game % players`."""
    named, players, seed, game = job
    level = tuned(named)
    me = game % players
    master = master_seed(seed, game)
    spent: list[float] = []

    def choose(state: GridState, seat: int, legal: tuple[Any, ...], rng: random.Random) -> Any:
        if seat != me or level == "greedy":
            return GREEDY.choose(GAME.view(state, seat), legal, rng)
        started = time.process_time()
        own = random.Random(seed * 7 + game * 131 + len(spent))  # the searches' own worlds
        if level == "strong":
            choice = STRONG.choose(GAME.view(state, seat), legal, rng)
        elif level == "clair-greedy":
            choice = clair_greedy(state, seat, legal)
        elif level == "clair-own":
            choice = clair_own(state, seat, legal)
        elif level == "strong-stock-look":
            choice = strong_stock(state, seat, legal, rng, look=True)
        elif level == "strong-stock":
            choice = strong_stock(state, seat, legal, rng)
        elif level == "fair-pimc-margin":
            choice = fair_pimc(state, seat, legal, own, master, margin)
        elif level == "fair-pimc":
            choice = fair_pimc(state, seat, legal, own, master)
        elif level == "own-rollout":
            choice = own_rollout(state, seat, legal, own, master)
        else:
            choice = clair_rollout(state, seat, legal, rng, master)
        spent.append(time.process_time() - started)
        return choice

    state = seeded_game(players, seed, game, choose)
    totals = state.totals
    winners = state.winners
    return {
        "game": game,
        "win": 1 / len(winners) if me in winners else 0.0,
        "seat_wins": [1 / len(winners) if s in winners else 0.0 for s in range(players)],
        "mine": totals[me],
        "others": statistics.fmean(t for s, t in enumerate(totals) if s != me),
        "best_other": max(t for s, t in enumerate(totals) if s != me),
        "spent": spent,
    }


def run(
    pool: Any, level: str, first: int, games: int, players: int, seed: int
) -> tuple[str, list[dict[str, Any]]]:
    started = time.perf_counter()
    jobs = [(level, players, seed, game) for game in range(first, first + games)]
    rows = pool.map(play, jobs, chunksize=max(1, games // 40))
    wins = sum(r["win"] for r in rows)
    low, high = wilson(wins, games)
    margins = [r["mine"] - r["others"] for r in rows]
    mine = statistics.fmean(r["mine"] for r in rows)
    sd = statistics.stdev(margins) / games**0.5
    by_seat = [sum(r["seat_wins"][s] for r in rows) / games for s in range(players)]
    spent = [t for r in rows for t in r["spent"]]
    cpu = f"; {statistics.median(spent) * 1000:.2f} ms median a decision" if spent else ""
    parity = 1 / players
    return (
        f"{level:<14} games {first}-{first + games - 1}: wins {wins / games:6.1%} "
        f"(95% CI {low:.1%}-{high:.1%}) = {wins / games / parity:.2f}x parity "
        f"({low / parity:.2f}-{high / parity:.2f}x); total {mine:.1f}, "
        f"{statistics.fmean(margins):+.2f} +- {sd:.2f} over the greedy seats' mean, best other "
        f"{statistics.fmean(r['best_other'] for r in rows):.1f}; all four seats' wins by seat "
        f"{' '.join(f'{w:.1%}' for w in by_seat)}{cpu}; {time.perf_counter() - started:.0f} s"
    ), rows


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--games", type=int, default=1000)
    parser.add_argument("--first", type=int, default=0)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--players", type=int, default=4)
    parser.add_argument("--levels", default="greedy,clair-greedy,clair-rollout")
    parser.add_argument("--processes", type=int, default=2)
    parser.add_argument("--save", help="write every level's per-game results to this file")
    parser.add_argument("--against", help="pair every level with the first level saved here")
    args = parser.parse_args()
    print(f"CPU: {cpu_model()}; seed {args.seed}", flush=True)
    bases: list[tuple[str, dict[int, dict[str, Any]]]] = []
    if args.against:
        level, saved = next(iter(json.loads(Path(args.against).read_text()).items()))
        bases.append((f"{level} of {args.against}", {r["game"]: r for r in saved}))
    kept: dict[str, list[dict[str, Any]]] = {}
    with multiprocessing.Pool(args.processes) as pool:
        for level in args.levels.split(","):
            line, rows = run(pool, level, args.first, args.games, args.players, args.seed)
            print(line, flush=True)
            for name, base in bases:
                print(paired(rows, base, name), flush=True)
            if not kept:
                bases.append((level, {r["game"]: r for r in rows}))
            kept[level] = [{k: r[k] for k in ("game", "win", "mine", "others")} for r in rows]
    if args.save:
        Path(args.save).write_text(json.dumps(kept))


if __name__ == "__main__":
    main()
