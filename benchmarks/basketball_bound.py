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
"""

from __future__ import annotations

import argparse
import multiprocessing
import random
import statistics
import sys
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))

from bots_bench import cpu_model, wilson  # noqa: E402

from domain.cards import rank_of  # noqa: E402
from domain.grid.game import BASKETBALL  # noqa: E402
from domain.grid.greedy import GreedyGridBot  # noqa: E402
from domain.grid.layout import index  # noqa: E402
from domain.grid.moves import face_down  # noqa: E402
from domain.grid.scoring import score_basketball  # noqa: E402
from domain.grid.state import GridState  # noqa: E402
from domain.grid.strong import StrongGridBot  # noqa: E402
from domain.shuffle import derive_seed  # noqa: E402
from events.schema.common import Act, DealHand, GameOptions  # noqa: E402
from events.schema.grid import CardDrawn, Discard, Draw, Flip, Peek, Replace  # noqa: E402

GAME = BASKETBALL
RULES = GAME.rules
COLUMNS = RULES.columns
GREEDY = GreedyGridBot()
STRONG = StrongGridBot()


def score(cards: list[str]) -> int:
    return score_basketball(cards, COLUMNS).total


def hidden_positions(state: GridState, seat: int) -> list[int]:
    mask = face_down(RULES, state, seat)
    return [at for at in range(2 * COLUMNS) if mask >> at & 1]


def gain(layout: list[str], at: int, card: str) -> int:
    was = layout[at]
    before = score(layout)
    layout[at] = card
    after = score(layout)
    layout[at] = was
    return after - before


def best_spot(state: GridState, seat: int, card: str) -> tuple[int, int | None]:
    """The most a card adds to the seat's exact score, and where."""
    layout = list(state.layouts[seat])
    best, where = -1_000, None
    for at in hidden_positions(state, seat):
        g = gain(layout, at, card)
        if g > best:
            best, where = g, at
    return best, where


def stock_card(state: GridState, seat: int) -> str | None:
    """The card a draw from the stock would give, reshuffle included."""
    events = GAME.decide(state, Act(seat, Draw("stock")))
    return next((e.card for e in events if isinstance(e, CardDrawn)), None)


def at_action(kind: type, at: int) -> Any:
    row, col = divmod(at, COLUMNS)
    return kind(row, col)


def clair_greedy(state: GridState, seat: int, legal: tuple[Any, ...]) -> Any:
    """Greedy on the exact score, knowing its own cards and the stock's next card."""
    if len(legal) == 1:
        return legal[0]
    if Peek() in legal:
        return Peek()
    step = state.step
    if step == "draw":
        from_stock = stock_card(state, seat)
        stock_gain = max(best_spot(state, seat, from_stock)[0], 0) if from_stock else -1
        pile = state.piles[0]
        if pile and Draw("discard") in legal:
            if best_spot(state, seat, pile[-1])[0] > stock_gain:
                return Draw("discard")
        return Draw("stock")
    if step == "place":
        assert state.drawn is not None
        g, where = best_spot(state, seat, state.drawn)
        if Discard() in legal and (g <= 0 or where is None):
            return Discard()
        assert where is not None
        return at_action(Replace, where)
    if step == "flip":
        layout = list(state.layouts[seat])
        total = score(layout)
        best, keep = legal[0], -1_000
        for action in legal:
            at = index(COLUMNS, action.row, action.col)
            was = layout[at]
            layout[at] = "JK"  # worth nothing, groups with nothing: what losing this card costs
            loss = total - score(layout)
            layout[at] = was
            if loss > keep:
                best, keep = action, loss
        return best
    return legal[0]


def options(state: GridState, seat: int, legal: tuple[Any, ...]) -> list[Any]:
    """One action per distinct outcome: positions do not matter in Basketball, ranks do."""
    seen: set[Any] = set()
    out = []
    for action in legal:
        if isinstance(action, Replace | Flip):
            key: Any = (type(action), rank_of(state.layouts[seat][index(COLUMNS, action.row, action.col)]))
        else:
            key = action
        if key not in seen:
            seen.add(key)
            out.append(action)
    return out


def advance(state: GridState, command: Any) -> GridState:
    for event in GAME.decide(state, command):
        state = GAME.evolve(state, event)
    return state


def finish(state: GridState, me: int, rng: random.Random, master: bytes) -> tuple[int, ...]:
    """Play on to the end: the others greedy, `me` by clair-greedy; the final totals."""
    while True:
        status = GAME.status(state)
        if status.phase == "game_over":
            return state.totals
        if status.phase == "awaiting_deal":
            state = advance(state, DealHand(derive_seed(master, status.hand).hex()))
            continue
        seat = status.to_act[rng.randrange(len(status.to_act))]
        legal = GAME.legal_actions(state, seat)
        if seat == me:
            choice = clair_greedy(state, seat, legal)
        else:
            choice = GREEDY.choose(GAME.view(state, seat), legal, rng)
        state = advance(state, Act(seat, choice))


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


def play(job: tuple[str, int, int, int]) -> dict[str, Any]:
    """One of bots_bench's games with the seat under test at `game % players`."""
    level, players, seed, game = job
    me = game % players
    master = seed.to_bytes(8, "big", signed=True) + game.to_bytes(8, "big")
    rng = random.Random(seed * 1_000_003 + game)
    state = GAME.initial_state(players, GameOptions())
    spent: list[float] = []
    while True:
        status = GAME.status(state)
        if status.phase == "game_over":
            break
        if status.phase == "awaiting_deal":
            state = advance(state, DealHand(derive_seed(master, status.hand).hex()))
            continue
        seat = status.to_act[rng.randrange(len(status.to_act))]
        legal = GAME.legal_actions(state, seat)
        if seat != me or level == "greedy":
            choice = GREEDY.choose(GAME.view(state, seat), legal, rng)
        else:
            started = time.process_time()
            if level == "strong":
                choice = STRONG.choose(GAME.view(state, seat), legal, rng)
            elif level == "clair-greedy":
                choice = clair_greedy(state, seat, legal)
            else:
                choice = clair_rollout(state, seat, legal, rng, master)
            spent.append(time.process_time() - started)
        state = advance(state, Act(seat, choice))
    totals = state.totals
    winners = state.winners
    return {
        "win": 1 / len(winners) if me in winners else 0.0,
        "seat_wins": [1 / len(winners) if s in winners else 0.0 for s in range(players)],
        "mine": totals[me],
        "others": statistics.fmean(t for s, t in enumerate(totals) if s != me),
        "best_other": max(t for s, t in enumerate(totals) if s != me),
        "spent": spent,
    }


def run(pool: Any, level: str, first: int, games: int, players: int, seed: int) -> str:
    started = time.perf_counter()
    jobs = [(level, players, seed, game) for game in range(first, first + games)]
    rows = pool.map(play, jobs, chunksize=max(1, games // 40))
    wins = sum(r["win"] for r in rows)
    low, high = wilson(wins, games)
    margins = [r["mine"] - r["others"] for r in rows]
    sd = statistics.stdev(margins) / games**0.5
    by_seat = [sum(r["seat_wins"][s] for r in rows) / games for s in range(players)]
    spent = [t for r in rows for t in r["spent"]]
    cpu = f"; {statistics.median(spent) * 1000:.2f} ms median a decision" if spent else ""
    parity = 1 / players
    return (
        f"{level:<14} games {first}-{first + games - 1}: wins {wins / games:6.1%} "
        f"(95% CI {low:.1%}-{high:.1%}) = {wins / games / parity:.2f}x parity "
        f"({low / parity:.2f}-{high / parity:.2f}x); total {statistics.fmean(r['mine'] for r in rows):.1f}, "
        f"{statistics.fmean(margins):+.2f} +- {sd:.2f} over the greedy seats' mean, best other "
        f"{statistics.fmean(r['best_other'] for r in rows):.1f}; all four seats' wins by seat "
        f"{' '.join(f'{w:.1%}' for w in by_seat)}{cpu}; {time.perf_counter() - started:.0f} s"
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--games", type=int, default=1000)
    parser.add_argument("--first", type=int, default=0)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--players", type=int, default=4)
    parser.add_argument("--levels", default="greedy,clair-greedy,clair-rollout")
    parser.add_argument("--processes", type=int, default=2)
    args = parser.parse_args()
    print(f"CPU: {cpu_model()}; seed {args.seed}", flush=True)
    with multiprocessing.Pool(args.processes) as pool:
        for level in args.levels.split(","):
            print(run(pool, level, args.first, args.games, args.players, args.seed), flush=True)


if __name__ == "__main__":
    main()
