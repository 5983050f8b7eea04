"""`bots_bench.py`'s Basketball games as the Basketball benchmarks play and compare them: the
same master seeds (hence the same deals and the same order of play), each decision made by a
chooser the benchmark gives; the strong bot's constants set per level; and two levels
compared game by game on the same deals. Benchmark only: nothing here is reachable from the
service."""

from __future__ import annotations

import random
import statistics
from collections.abc import Callable
from typing import Any

from basketball_clair import GAME

from domain.grid import basketball_dp, strong, strong_basketball, strong_eval
from domain.grid.state import GridState
from domain.shuffle import derive_seed
from events.schema.common import Act, DealHand, GameOptions

Chooser = Callable[[GridState, int, tuple[Any, ...], random.Random], Any]
"""(state, seat to act, its legal actions, the game's rng) -> the action taken."""


def advance(state: GridState, command: Any) -> GridState:
    for event in GAME.decide(state, command):
        state = GAME.evolve(state, event)
    return state


def master_seed(seed: int, game: int) -> bytes:
    """Game `game` of run `seed`: each hand's deal derives from it, as in `bots_bench.py`."""
    return seed.to_bytes(8, "big", signed=True) + game.to_bytes(8, "big")


def seeded_game(players: int, seed: int, game: int, choose: Chooser) -> GridState:
    """Game `game` of run `seed` played to its end, every decision by `choose`: the deals
    from its master seed, the seat to act (when several may) and the bots' coin flips from its
    own rng, as `bots_bench.py` draws them. Returns the finished state."""
    rng = random.Random(seed * 1_000_003 + game)
    state = GAME.initial_state(players, GameOptions())
    return played_out(state, master_seed(seed, game), rng, choose)


def played_out(state: GridState, master: bytes, rng: random.Random, choose: Chooser) -> GridState:
    """`state` played on to the game's end, every decision by `choose`, each hand dealt from
    `master`, the seat to act (when several may) drawn from `rng`. Returns the final state."""
    while True:
        status = GAME.status(state)
        if status.phase == "game_over":
            return state
        if status.phase == "awaiting_deal":
            state = advance(state, DealHand(derive_seed(master, status.hand).hex()))
            continue
        seat = status.to_act[rng.randrange(len(status.to_act))]
        legal = GAME.legal_actions(state, seat)
        state = advance(state, Act(seat, choose(state, seat, legal, rng)))


KNOBS = {
    "option": (strong_eval, "BASKETBALL_OPTION"),
    "bonus": (strong_eval, "BASKETBALL_UNSEEN_BONUS"),
    "ramp": (strong_eval, "BASKETBALL_RAMP"),
    "look": (strong, "BASKETBALL_LOOK_AHEAD"),
    "dp": (strong, "BASKETBALL_DP"),
    "pile": (basketball_dp, "PILE"),
    "fresh": (basketball_dp, "FRESH"),
    "all": (strong_basketball, "FOLLOW_ALL"),
    "hand": (strong_basketball, "FOLLOW_HAND"),
}
"""The strong bot's constants a level may set (absent ones, on an older tree, are skipped)."""
DEFAULTS = {name: getattr(module, attr, None) for name, (module, attr) in KNOBS.items()}


def tuned(level: str) -> str:
    """Set the constants `level` names (the others as the tree has them); its base level."""
    base, *knobs = level.split(":")
    settings = dict(DEFAULTS)
    for knob in knobs:
        name, value = knob.split("=")
        if DEFAULTS[name] is None:
            raise SystemExit(f"{name}: this tree has no {KNOBS[name][1]}")
        settings[name] = float(value)
    for name, (module, attr) in KNOBS.items():
        if settings[name] is not None:
            setattr(module, attr, settings[name])
    return base


def paired(rows: list[dict[str, Any]], base: dict[int, dict[str, Any]], name: str) -> str:
    """The per-game differences from `base` (the same games), mean +- standard error."""
    pairs = [(r, base[r["game"]]) for r in rows if r["game"] in base]
    if len(pairs) < 2:
        return f"  paired against {name}: no common games"
    points = [(r["mine"] - r["others"]) - (b["mine"] - b["others"]) for r, b in pairs]
    wins = [r["win"] - b["win"] for r, b in pairs]
    n = len(pairs)
    same = sum(p == 0 and w == 0 for p, w in zip(points, wins, strict=True))
    return (
        f"  paired against {name} ({n} games, {same} alike): points "
        f"{statistics.fmean(points):+.3f} +- {statistics.stdev(points) / n**0.5:.3f}, wins "
        f"{statistics.fmean(wins):+.2%} +- {statistics.stdev(wins) / n**0.5:.2%}"
    )
