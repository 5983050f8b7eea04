"""The strong bot sees exactly what its seat sees, and only ever plays a legal action.

A state is reached by greedy play from a random deal; its twin has the cards the seat cannot
see (face-down cards it has not peeked at, the stock, a card another seat drew from the
stock; in Tens-shedding the other hands, every face-down stack card, the undealt cards)
shuffled among those same places. The bot, given the seat's view of each, its legal
actions and the same seed, must choose the same action in both.
"""

from __future__ import annotations

import random
from typing import Any

import pytest
from hypothesis import HealthCheck, Phase, given, settings
from hypothesis import strategies as st
from msgspec.structs import replace

from domain.bots.base import Bot
from domain.decider import Decider
from domain.grid import GridState
from domain.shedding.state import SheddingState
from domain.shuffle import derive_seed
from domain.simulate import play_game
from domain.variants import DECIDERS, bot, decider_for
from events.schema.common import Act, DealHand, GameOptions

pytestmark = pytest.mark.property

VARIANTS = list(DECIDERS)
EXAMPLES = settings(
    max_examples=25,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow],
    database=None,
    phases=(Phase.explicit, Phase.generate),
)


def reached(variant: str, game_seed: int, steps: int) -> tuple[Decider, Any, int] | None:
    """The state after `steps` greedy commands of a 4-player game, and a seat to act."""
    decider = decider_for(variant)
    greedy = bot("greedy", variant)
    rng = random.Random(game_seed)
    master = game_seed.to_bytes(8, "big")
    state = decider.initial_state(4, GameOptions())
    for step in range(steps + 1):
        status = decider.status(state)
        if status.phase == "game_over":
            return None
        if status.phase == "awaiting_deal":
            command: Any = DealHand(derive_seed(master, status.hand).hex())
        else:
            seat = status.to_act[rng.randrange(len(status.to_act))]
            if step == steps:
                return decider, state, seat
            legal = decider.legal_actions(state, seat)
            choice = greedy.choose(decider.view(state, seat), legal, rng)
            command = Act(seat, decider.pick(choice, rng))
        for event in decider.decide(state, command):
            state = decider.evolve(state, event)
    return None


def grid_twin(state: GridState, viewer: int, columns: int, rng: random.Random) -> GridState:
    layouts = [list(layout) for layout in state.layouts]
    places: list[tuple[int, int]] = []
    for seat, _layout in enumerate(layouts):
        known = state.face_up[seat] | (state.peeked[seat] if seat == viewer else 0)
        places.extend((seat, at) for at in range(2 * columns) if not known >> at & 1)
    stock = list(state.stock)
    hidden = [layouts[s][at] for s, at in places] + stock[state.top :]
    drawn_hidden = state.drawn is not None and state.drawn_from == "stock"
    drawn_hidden = drawn_hidden and state.to_play != viewer
    if drawn_hidden:
        assert state.drawn is not None
        hidden.append(state.drawn)
    rng.shuffle(hidden)
    for (seat, at), card in zip(places, hidden, strict=False):
        layouts[seat][at] = card
    rest = hidden[len(places) :]
    stock[state.top :] = rest[: len(stock) - state.top]
    return replace(
        state,
        layouts=tuple(tuple(layout) for layout in layouts),
        stock=tuple(stock),
        drawn=rest[-1] if drawn_hidden else state.drawn,
    )


def shedding_twin(state: SheddingState, viewer: int, rng: random.Random) -> SheddingState:
    round_ = state.round
    assert round_ is not None
    hidden = list(round_.undealt)
    for seat, p in enumerate(round_.players):
        hidden.extend(card for card in p.face_down if card is not None)
        if seat != viewer:
            hidden.extend(p.hand)
    rng.shuffle(hidden)
    deal = iter(hidden)
    players = []
    for seat, p in enumerate(round_.players):
        face_down = tuple(None if card is None else next(deal) for card in p.face_down)
        hand = p.hand if seat == viewer else tuple(next(deal) for _ in p.hand)
        players.append(replace(p, hand=hand, face_down=face_down))
    undealt = tuple(deal)
    return replace(state, round=replace(round_, players=tuple(players), undealt=undealt))


def twin(decider: Decider, state: Any, viewer: int, rng: random.Random) -> Any:
    if isinstance(state, SheddingState):
        return shedding_twin(state, viewer, rng)
    return grid_twin(state, viewer, decider.rules.columns, rng)  # type: ignore[attr-defined]


@EXAMPLES
@given(
    variant=st.sampled_from(VARIANTS),
    game_seed=st.integers(0, 2**32),
    steps=st.integers(0, 300),
    shuffle_seed=st.integers(0, 2**32),
    bot_seed=st.integers(0, 2**32),
)
def test_states_that_differ_only_in_unseen_cards_get_the_same_choice(
    variant: str, game_seed: int, steps: int, shuffle_seed: int, bot_seed: int
) -> None:
    found = reached(variant, game_seed, steps)
    if found is None:
        return
    decider, state, seat = found
    other = twin(decider, state, seat, random.Random(shuffle_seed))
    view = decider.view(state, seat)
    assert decider.view(other, seat) == view
    legal = decider.legal_actions(state, seat)
    assert decider.legal_actions(other, seat) == legal
    strong = bot("strong", variant)
    first = strong.choose(view, legal, random.Random(bot_seed))
    second = strong.choose(decider.view(other, seat), legal, random.Random(bot_seed))
    assert first == second
    assert any(decider.covers(option, first) for option in legal)


def test_a_twin_really_differs_from_its_state() -> None:
    """The twins are not the same state: hidden cards move between places."""
    differs = 0
    for variant in VARIANTS:
        found = reached(variant, 7, 40)
        assert found is not None
        decider, state, seat = found
        differs += twin(decider, state, seat, random.Random(1)) != state
    assert differs == len(VARIANTS)


class Checked:
    """A bot whose every choice is checked against the legal actions it was offered."""

    def __init__(self, inner: Bot, decider: Decider) -> None:
        self.inner, self.decider, self.kind = inner, decider, inner.kind
        self.choices = 0

    def choose(self, view: Any, legal: Any, rng: Any) -> Any:
        choice = self.inner.choose(view, legal, rng)
        # The random bot may return a listed option: the caller turns it into an action.
        assert choice in legal or any(self.decider.covers(option, choice) for option in legal)
        self.choices += 1
        return choice


@settings(max_examples=2, deadline=None, database=None, phases=(Phase.explicit, Phase.generate))
@given(game_seed=st.integers(0, 2**32))
@pytest.mark.parametrize("variant", VARIANTS)
def test_strong_bots_play_whole_games_with_legal_actions_only(variant: str, game_seed: int) -> None:
    decider = decider_for(variant)
    kinds = ["strong", "greedy", "strong", "random"]
    bots = [Checked(bot(kind, variant), decider) for kind in kinds]
    options = GameOptions() if variant == "tens-shedding" else GameOptions(hands=2)
    master = game_seed.to_bytes(8, "big")
    record = play_game(decider, 4, bots, master, random.Random(game_seed), options)
    assert record.winners
    assert bots[0].choices
    assert bots[2].choices
    assert all(kind == "strong" for kind in (bots[0].kind, bots[2].kind))
