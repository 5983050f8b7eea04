"""Legal actions are complete and small, for every variant and player count.

At random steps of random games: every concrete action a listed item covers is accepted by
`decide` (all of a small option's distinct outcomes, a random sample of a large one's);
every candidate from a broad generator (every position and source for a grid seat; subsets
and orders of a Tens-shedding seat's cards, sampled four-card choices in setup) that
`decide` accepts is covered by a listed item, and every other is refused with a
RuleViolation that changes nothing. The JSON of a seat's view plus its legal actions (what
`GET /me` carries) stays under 8 KB.
"""

from __future__ import annotations

import random
from collections.abc import Iterator
from itertools import combinations, islice
from typing import Any

import msgspec
import pytest
from hypothesis import HealthCheck, Phase, event, given, settings, target
from hypothesis import strategies as st

from domain.decider import Decider
from domain.errors import RuleViolation
from domain.grid import GridGame
from domain.shedding.options import expand
from domain.shedding.rules import STACKS
from domain.shedding.state import SETUP, SheddingState
from domain.shuffle import derive_seed
from domain.variants import DECIDERS
from events.schema.common import Act, DealHand, GameOptions
from events.schema.grid import Discard, Draw, EndTurn, Flip, GoOut, Peek, Replace, SetupFlip
from events.schema.shedding import ChooseStacks, EndPlay, PlayBlind, PlayCards

pytestmark = pytest.mark.property

ME_LIMIT = 8 * 1024
CHECK_EVERY = 6  # on average, one step in this many gets the full two-way check
SEATINGS = [
    pytest.param(decider, players, id=f"{name}-{players}")
    for name, decider in DECIDERS.items()
    for players in range(decider.min_players, decider.max_players + 1)
]
encode = msgspec.json.encode


def options_for(decider: Decider, turn_limit: int | None) -> GameOptions:
    if isinstance(decider, GridGame):
        return GameOptions(turn_limit=turn_limit, hands=1)
    return GameOptions(turn_limit=None if turn_limit is None else 10 * turn_limit)


def played(decider: Decider, players: int, seed: int, turn_limit: int | None) -> Iterator[Any]:
    """The state before every command of a random game (its first hand, for the grid games)."""
    rng = random.Random(seed)
    state = decider.initial_state(players, options_for(decider, turn_limit))
    hands = 0
    while (status := decider.status(state)).phase != "game_over":
        if status.phase == "awaiting_deal":
            hands += 1
            if hands > 2:
                return
            command: Any = DealHand(derive_seed(seed.to_bytes(8, "big"), hands).hex())
        else:
            yield state
            seat = status.to_act[rng.randrange(len(status.to_act))]
            legal = decider.legal_actions(state, seat)
            command = Act(seat, decider.pick(legal[rng.randrange(len(legal))], rng))
        for happened in decider.decide(state, command):
            state = decider.evolve(state, happened)


# ---- candidates: what a client might send ---------------------------------------------------


def grid_candidates(game: GridGame, players: int) -> list[Any]:
    """Every action at every position (and one off the grid), from every source and seat."""
    spots = [(row, col) for row in range(3) for col in range(game.rules.columns + 1)]
    sources = ("stock", "discard", "centre", "pile")
    return [
        *(kind(row, col) for kind in (SetupFlip, Replace, Flip) for row, col in spots),
        *(Draw(source, seat) for source in sources for seat in (None, *range(players))),
        Peek(),
        Discard(),
        GoOut(),
        EndTurn(),
    ]


def shedding_candidates(state: SheddingState, seat: int, rng: random.Random) -> list[Any]:
    assert state.round is not None
    me = state.round.players[seat]
    other = state.round.players[(seat + 1) % state.players]
    strangers = [*other.hand, *(card for card in me.face_down if card is not None)]
    if state.phase == SETUP:
        fifteen = list(me.hand) or list(other.hand)
        picks = [rng.sample(fifteen, 4) for _ in range(24)]
        picks += [fifteen[:3], fifteen[:5], [fifteen[0]] * 4, [*fifteen[:3], *strangers[:1]]]
        return [ChooseStacks(tuple(cards)) for cards in picks]
    stacks = [i for i, card in enumerate(me.face_up) if card is not None]
    cards: list[tuple[str, Any]] = [("hand", card) for card in me.hand]
    cards += [("stack", i) for i in stacks]
    rank_of = {("hand", card): card[0] for card in me.hand}
    rank_of.update((("stack", i), str(me.face_up[i])[0]) for i in stacks)
    subsets: list[list[tuple[str, Any]]] = []
    for rank in set(rank_of.values()):
        of_rank = [c for c in cards if rank_of[c] == rank]
        if len(of_rank) <= 6:  # every subset; larger ones sampled
            subsets += [list(s) for k in range(len(of_rank) + 1) for s in combinations(of_rank, k)]
        else:
            subsets += [rng.sample(of_rank, rng.randint(1, len(of_rank))) for _ in range(40)]
    subsets += [rng.sample(cards, min(len(cards), rng.randint(2, 4))) for _ in range(12)]
    plays = []
    for subset in subsets:
        rng.shuffle(subset)  # any order
        hand = tuple(card for where, card in subset if where == "hand")
        plays.append(PlayCards(hand, tuple(i for where, i in subset if where == "stack")))
    odd = [
        PlayCards(hand=(me.hand[0],) * 2) if me.hand else PlayCards(),
        PlayCards(stacks=(stacks[0], stacks[0])) if stacks else PlayCards(),
        PlayCards(stacks=tuple(i for i in range(STACKS) if me.face_up[i] is None)),
        PlayCards(hand=tuple(strangers[:1])),
        PlayCards(stacks=(-1,)),
        PlayCards(stacks=(STACKS,)),
    ]
    blind = [PlayBlind(stack) for stack in range(-1, STACKS + 1)]
    return [*plays, *odd, *blind, EndPlay(), ChooseStacks(tuple(me.hand[:4]))]


def candidates(decider: Decider, state: Any, seat: int, rng: random.Random) -> list[Any]:
    if isinstance(decider, GridGame):
        return grid_candidates(decider, state.players)
    return shedding_candidates(state, seat, rng)


def covered_sample(decider: Decider, option: Any, rng: random.Random) -> list[Any]:
    """A small option's every distinct outcome; a large one's first few and random picks."""
    if isinstance(decider, GridGame):
        return [option]
    return [*islice(expand(option), 24), *(decider.pick(option, rng) for _ in range(8))]


# ---- the property --------------------------------------------------------------------------

largest: dict[str, int] = {}


def check_step(decider: Decider, state: Any, rng: random.Random) -> None:
    before = encode(state)
    for seat in range(state.players):
        legal = decider.legal_actions(state, seat)
        for option in legal:
            for action in covered_sample(decider, option, rng):
                assert decider.decide(state, Act(seat, action)), (seat, option, action)
        for action in candidates(decider, state, seat, rng):
            try:
                decider.decide(state, Act(seat, action))
            except RuleViolation:
                assert encode(state) == before
                continue
            assert any(decider.covers(option, action) for option in legal), (seat, action)
    assert encode(state) == before


def me_size(decider: Decider, state: Any) -> int:
    return max(
        len(encode(decider.view(state, seat))) + len(encode(decider.legal_actions(state, seat)))
        for seat in decider.status(state).to_act
    )


@pytest.mark.parametrize(("decider", "players"), SEATINGS)
@settings(
    max_examples=3,
    deadline=None,
    database=None,
    phases=(Phase.explicit, Phase.generate, Phase.target),
    suppress_health_check=[HealthCheck.too_slow],
)
@given(seed=st.integers(0, 2**32), turn_limit=st.sampled_from([None, 3, 12]))
def test_legal_actions_are_exactly_what_decide_accepts_and_small(
    decider: Decider, players: int, seed: int, turn_limit: int | None
) -> None:
    rng = random.Random(seed + 1)
    biggest = 0
    for state in played(decider, players, seed, turn_limit):
        biggest = max(biggest, me_size(decider, state))
        if rng.randrange(CHECK_EVERY) == 0:
            check_step(decider, state, rng)
    target(float(biggest), label="largest view + legal actions (bytes)")
    event(f"largest /me under {-(-biggest // 1024)} KB")
    key = f"{decider.name}-{players}"
    largest[key] = max(largest.get(key, 0), biggest)
    print(f"{key}: largest view + legal actions {biggest} bytes")
    assert biggest < ME_LIMIT
