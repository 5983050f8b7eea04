"""Invariants of every grid game, over random games of every variant and player count."""

from __future__ import annotations

import random
from collections import Counter
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any, Union

import msgspec
import pytest
from hypothesis import HealthCheck, Phase, given, settings
from hypothesis import strategies as st

from domain.cards import is_card, make_deck
from domain.errors import RuleViolation
from domain.grid import BASKETBALL, GOLF, HANG_TEN, TENS, GridGame, GridState
from events.schema.common import (
    Act,
    DealHand,
    GameEnded,
    GameOptions,
    GameStarted,
    HandDealt,
    HandEnded,
)
from events.schema.grid import (
    EVENTS,
    Discard,
    Draw,
    EndTurn,
    Flip,
    GoOut,
    Peek,
    Replace,
    SetupFlip,
    TurnEnded,
)

pytestmark = pytest.mark.property

GAMES = [HANG_TEN, TENS, GOLF, BASKETBALL]
SEATINGS = [
    pytest.param(game, players, id=f"{game.name}-{players}")
    for game in GAMES
    for players in range(game.min_players, game.max_players + 1)
]
# The examples are random seeds: shrinking them teaches nothing and takes minutes.
NO_SHRINK = (Phase.explicit, Phase.generate)
FEW = settings(
    max_examples=3,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow],
    database=None,
    phases=NO_SHRINK,
)

ALL_EVENTS = (GameStarted, HandDealt, HandEnded, GameEnded, *EVENTS)
decode_event = msgspec.json.Decoder(Union[ALL_EVENTS]).decode  # type: ignore[valid-type]  # noqa: UP007
encode = msgspec.json.encode


# ---- playing random games --------------------------------------------------------------------


@dataclass(frozen=True)
class Step:
    before: GridState
    command: Any
    events: tuple[Any, ...]


def hand_seed(master: int, hand: int) -> str:
    return random.Random(master * 1000 + hand).randbytes(32).hex()


def random_game(
    game: GridGame, players: int, master: int, choices: int, options: GameOptions
) -> Iterator[Step]:
    """A game to its end: fresh seeds for each deal, a uniformly random legal action of a
    randomly chosen seat that may act for every other command."""
    rng = random.Random(choices)
    state = game.initial_state(players, options)
    while (status := game.status(state)).phase != "game_over":
        if status.phase == "awaiting_deal":
            command: Any = DealHand(hand_seed(master, status.hand + 1))
        else:
            seat = status.to_act[rng.randrange(len(status.to_act))]
            legal = game.legal_actions(state, seat)
            command = Act(seat, legal[rng.randrange(len(legal))])
        events = game.decide(state, command)
        yield Step(state, command, events)
        for event in events:
            state = game.evolve(state, event)


games = st.fixed_dictionaries(
    {
        "master": st.integers(0, 2**32),
        "choices": st.integers(0, 2**32),
        "options": st.builds(
            GameOptions,
            turn_limit=st.sampled_from([None, 2, 5, 12]),
            hands=st.integers(1, 2),
        ),
    }
)


# ---- oracles built from the state, independently of the view code ---------------------------


def deck_of(game: GridGame, players: int) -> Counter[str]:
    size = game.rules.deck_for(players)
    return Counter(make_deck(size.decks, size.jokers))


def cards_in_play(state: GridState) -> Counter[str]:
    found = Counter(state.stock[state.top :])
    for layout in state.layouts:
        found.update(layout)
    for pile in state.piles:
        found.update(pile)
    found.update(card for card in (state.centre, state.drawn) if card is not None)
    return found


def knowable(state: GridState, viewer: int | None) -> Counter[str]:
    """Face-up cards, the piles, the centre card, a drawn card that came from a pile or to
    this viewer, the viewer's own peeked cards; every card of the hand once it has ended."""
    over = state.hand > 0 and state.phase in ("awaiting_deal", "game_over")
    known: Counter[str] = Counter()
    for seat, layout in enumerate(state.layouts):
        seen = state.face_up[seat] | (state.peeked[seat] if seat == viewer else 0)
        known.update(card for at, card in enumerate(layout) if over or seen >> at & 1)
    for pile in state.piles:
        known.update(pile)
    if state.centre is not None:
        known[state.centre] += 1
    if state.drawn is not None and (state.drawn_from != "stock" or viewer == state.to_play):
        known[state.drawn] += 1
    return known


def cards_named(value: Any) -> Counter[str]:
    """Every card text anywhere in the JSON encoding of `value`."""
    found: Counter[str] = Counter()
    stack = [msgspec.json.decode(encode(value))]
    while stack:
        item = stack.pop()
        if isinstance(item, str) and is_card(item):
            found[item] += 1
        elif isinstance(item, list):
            stack.extend(item)
        elif isinstance(item, dict):
            stack.extend(item.values())
    return found


def viewers(players: int) -> list[int | None]:
    return [None, *range(players)]


# ---- the properties --------------------------------------------------------------------------


@pytest.mark.parametrize(("game", "players"), SEATINGS)
@FEW
@given(setup=games)
def test_cards_are_conserved_after_every_event(
    game: GridGame, players: int, setup: dict[str, Any]
) -> None:
    deck = deck_of(game, players)
    for step in random_game(game, players, **setup):
        state = step.before
        for event in step.events:
            state = game.evolve(state, event)
            assert cards_in_play(state) == deck, type(event).__name__


@pytest.mark.parametrize(("game", "players"), SEATINGS)
@settings(max_examples=2, deadline=None, database=None, phases=NO_SHRINK)
@given(master=st.integers(0, 2**32), choices=st.integers(0, 2**32))
def test_the_game_always_ends_each_hand_within_the_turn_limit(
    game: GridGame, players: int, master: int, choices: int
) -> None:
    options = GameOptions()
    state = game.initial_state(players, options)
    hands = state.hands or 100
    most = hands * (players * state.turn_limit * 4 + players * 4 + 2)
    turns_this_hand = 0
    for commands, step in enumerate(random_game(game, players, master, choices, options), 1):
        assert commands <= most
        for event in step.events:
            if isinstance(event, TurnEnded):
                turns_this_hand += 1
            if isinstance(event, HandEnded):
                assert turns_this_hand <= players * state.turn_limit
                turns_this_hand = 0


@pytest.mark.parametrize(("game", "players"), SEATINGS)
@FEW
@given(setup=games)
def test_the_same_seeds_and_commands_give_the_same_events(
    game: GridGame, players: int, setup: dict[str, Any]
) -> None:
    first = list(random_game(game, players, **setup))
    again = list(random_game(game, players, **setup))
    assert [s.events for s in first] == [s.events for s in again]
    state = game.initial_state(players, setup["options"])
    for step in first:
        events = game.decide(state, step.command)
        assert events == step.events
        for event in events:
            state = game.evolve(state, event)


@pytest.mark.parametrize(("game", "players"), SEATINGS)
@FEW
@given(setup=games)
def test_folding_the_stored_events_from_scratch_gives_the_live_state(
    game: GridGame, players: int, setup: dict[str, Any]
) -> None:
    live = game.initial_state(players, setup["options"])
    stored: list[bytes] = []
    for step in random_game(game, players, **setup):
        for event in step.events:
            live = game.evolve(live, event)
            stored.append(encode(event))
    replayed = game.initial_state(players, setup["options"])
    for data in stored:
        replayed = game.evolve(replayed, decode_event(data))
    assert replayed == live


@pytest.mark.parametrize(("game", "players"), SEATINGS)
@FEW
@given(setup=games)
def test_no_view_and_no_redacted_event_shows_a_card_the_viewer_may_not_know(
    game: GridGame, players: int, setup: dict[str, Any]
) -> None:
    seats = viewers(players)
    for step in random_game(game, players, **setup):
        state = step.before
        for event in step.events:
            state = game.evolve(state, event)
            for viewer in seats:
                allowed = knowable(state, viewer)
                shown = cards_named(game.redact(event, viewer, hand_over=False))
                assert not shown - allowed, (type(event).__name__, viewer)
        for viewer in seats:
            assert cards_named(game.view(state, viewer)) == knowable(state, viewer), viewer


def any_command(players: int) -> st.SearchStrategy[Any]:
    spot = {"row": st.integers(0, 1), "col": st.integers(0, 4)}
    actions = st.one_of(
        st.builds(SetupFlip, **spot),
        st.builds(Replace, **spot),
        st.builds(Flip, **spot),
        st.just(Peek()),
        st.just(Discard()),
        st.just(GoOut()),
        st.just(EndTurn()),
        st.builds(
            Draw,
            source=st.sampled_from(["stock", "discard", "centre", "pile"]),
            from_seat=st.none() | st.integers(-1, players),
        ),
    )
    return st.one_of(
        st.builds(Act, seat=st.integers(-1, players), action=actions),
        st.builds(DealHand, seed=st.just("ab" * 32)),
    )


@pytest.mark.parametrize(("game", "players"), SEATINGS)
@FEW
@given(setup=games, data=st.data())
def test_a_command_is_accepted_exactly_when_legal_and_a_refusal_changes_nothing(
    game: GridGame, players: int, setup: dict[str, Any], data: st.DataObject
) -> None:
    for step in random_game(game, players, **setup):
        state, before = step.before, encode(step.before)
        status = game.status(state)
        for seat in range(players):
            legal_now = game.legal_actions(state, seat)
            assert bool(legal_now) == (seat in status.to_act)
            for action in legal_now:
                assert game.decide(state, Act(seat, action))
        command = data.draw(any_command(players))
        if isinstance(command, Act):
            legal = 0 <= command.seat < players and command.action in game.legal_actions(
                state, command.seat
            )
        else:
            legal = status.phase == "awaiting_deal"
        if legal:
            assert game.decide(state, command)
        else:
            with pytest.raises(RuleViolation):
                game.decide(state, command)
        assert encode(state) == before
