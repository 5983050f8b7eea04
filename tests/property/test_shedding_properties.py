"""Tens-shedding invariants over random games of 2 to 10 players, played by random and
greedy bots: cards are conserved, games end, the same seed and commands give the same
events, a fold from scratch equals the live state, no viewer ever sees a card it may not
know, and a command is accepted exactly when it is legal (else it changes nothing)."""

from __future__ import annotations

import random
import re
from collections import Counter
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

import msgspec
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from domain.bots.base import Bot, RandomBot
from domain.cards import make_deck
from domain.errors import RuleViolation
from domain.shedding import TENS_SHEDDING as RULES
from domain.shedding import GreedySheddingBot, SheddingState
from domain.shedding.options import expand
from domain.shedding.rules import decks_for
from domain.shuffle import derive_seed
from events.schema.common import Act, DealHand, GameOptions, HandDealt, HandEnded
from events.schema.shedding import ChooseStacks, EndPlay, PlayBlind, PlayCards

pytestmark = pytest.mark.property

CARD = re.compile(rb'"([A2-9TJQK][SHDC]|JK)"')
MAX_COMMANDS = 20_000


@dataclass(frozen=True)
class Game:
    players: int
    master: bytes
    choices: int
    bots: tuple[str, ...]
    options: GameOptions


@st.composite
def games(draw: st.DrawFn) -> Game:
    players = draw(st.integers(2, 10))
    bots = tuple(
        draw(st.lists(st.sampled_from(["random", "greedy"]), min_size=players, max_size=players))
    )
    low = draw(st.integers(15, 20))
    options = GameOptions(
        turn_limit=draw(st.one_of(st.none(), st.integers(1, 40), st.integers(40, 400))),
        grab_min=low,
        grab_max=draw(st.integers(low, 23)),
    )
    return Game(
        players, draw(st.binary(min_size=4, max_size=4)), draw(st.integers(0, 2**32)), bots, options
    )


Step = tuple[SheddingState, Any, tuple[Any, ...], SheddingState]


def played(game: Game) -> Iterator[Step]:
    """Every command of a whole game, with the state before and after it."""
    rng = random.Random(game.choices)
    bots: list[Bot] = [GreedySheddingBot() if b == "greedy" else RandomBot() for b in game.bots]
    state = RULES.initial_state(game.players, game.options)
    for _ in range(MAX_COMMANDS):
        status = RULES.status(state)
        if status.phase == "game_over":
            return
        command: Any
        if status.phase == "awaiting_deal":
            command = DealHand(derive_seed(game.master, status.hand).hex())
        else:
            seat = status.to_act[rng.randrange(len(status.to_act))]
            legal = RULES.legal_actions(state, seat)
            choice = bots[seat].choose(RULES.view(state, seat), legal, rng)
            command = Act(seat, RULES.pick(choice, rng))
        events = RULES.decide(state, command)
        after = state
        for event in events:
            after = RULES.evolve(after, event)
        yield state, command, events, after
        state = after
    raise AssertionError("the game did not end")


def every_card(state: SheddingState) -> Counter[str]:
    round_ = state.round
    assert round_ is not None
    cards = Counter(round_.pile) + Counter(round_.burned) + Counter(round_.undealt)
    for p in round_.players:
        cards.update(p.hand)
        cards.update(c for c in (*p.face_up, *p.face_down) if c is not None)
    return cards


def known_to(state: SheddingState, viewer: int | None) -> Counter[str]:
    """The oracle: what the rules let `viewer` know, read from the state."""
    round_ = state.round
    if round_ is None:
        return Counter()
    over = round_.ended is not None
    known = Counter(round_.pile) + Counter(round_.burned)
    for seat, p in enumerate(round_.players):
        known.update(c for c in p.face_up if c is not None)
        if over or seat == viewer:
            known.update(p.hand)
        if over:
            known.update(c for c in p.face_down if c is not None)
    if over:
        known.update(round_.undealt)
    return known


def cards_in(value: Any) -> Counter[str]:
    return Counter(m.decode() for m in CARD.findall(msgspec.json.encode(value)))


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(games())
def test_cards_are_conserved_after_every_event(game: Game) -> None:
    deck = Counter(make_deck(decks_for(game.players)))
    for before, _, events, _ in played(game):
        state = before
        for event in events:
            state = RULES.evolve(state, event)
            if state.round is not None:
                assert every_card(state) == deck


@settings(max_examples=60, deadline=None)
@given(games())
def test_every_game_ends_with_the_lowest_totals_winning(game: Game) -> None:
    last = None
    for _, _, _, after in played(game):
        last = after
    assert last is not None
    status = RULES.status(last)
    assert status.phase == "game_over"
    assert max(status.totals) >= 100
    assert status.winners == tuple(
        s for s, t in enumerate(status.totals) if t == min(status.totals)
    )


@settings(max_examples=40, deadline=None)
@given(games())
def test_the_same_seed_and_commands_give_the_same_events_and_a_fold_equals_live(
    game: Game,
) -> None:
    steps = list(played(game))
    replay = RULES.initial_state(game.players, game.options)
    folded = RULES.initial_state(game.players, game.options)
    for before, command, events, after in steps:
        assert replay == before
        again = RULES.decide(replay, command)
        assert again == events
        for event in events:
            replay = RULES.evolve(replay, event)
        assert replay == after
    for _, _, events, _ in steps:
        for event in events:
            folded = RULES.evolve(folded, event)
    assert folded == steps[-1][3]


@settings(max_examples=40, deadline=None)
@given(games())
def test_no_view_or_event_shows_a_card_its_viewer_may_not_know(game: Game) -> None:
    viewers: list[int | None] = [None, *range(game.players)]
    for before, _, events, after in played(game):
        for viewer in viewers:
            seen = cards_in(RULES.view(after, viewer))
            assert seen <= known_to(after, viewer), (viewer, seen - known_to(after, viewer))
        ended = any(isinstance(e, HandEnded) for e in events)
        state = before
        for event in events:
            folded = RULES.evolve(state, event)
            for viewer in viewers:
                shown = RULES.redact(event, viewer, ended)
                if isinstance(event, HandDealt):
                    assert shown.seed == ""
                # An event may name a card public just before or just after it.
                assert cards_in(shown) <= known_to(state, viewer) | known_to(folded, viewer)
            state = folded


def wild_command(state: SheddingState, rng: random.Random) -> Any:
    """Any command a client might send, legal or not."""
    round_ = state.round
    seat = rng.randrange(-1, state.players + 1)
    owner = round_.players[rng.randrange(state.players)] if round_ else None
    pool = list(owner.hand) if owner and rng.random() < 0.8 else list(make_deck(1))
    pool += [c for c in (owner.face_down if owner else ()) if c is not None]
    kind = rng.randrange(6)
    if kind == 0:
        return Act(
            seat, ChooseStacks(tuple(rng.sample(pool, min(len(pool), rng.choice([3, 4, 4, 5])))))
        )
    if kind == 1:
        hand = tuple(rng.sample(pool, min(len(pool), rng.randrange(0, 3))))
        stacks = tuple(rng.randrange(-1, 5) for _ in range(rng.randrange(0, 3)))
        return Act(seat, PlayCards(hand=hand, stacks=stacks))
    if kind == 2:
        return Act(seat, PlayBlind(rng.randrange(-1, 5)))
    if kind == 3:
        return Act(seat, EndPlay())
    if kind == 4:
        return DealHand(derive_seed(b"wild", rng.randrange(9)).hex())
    return Act(seat, "pass")


@settings(max_examples=40, deadline=None)
@given(games())
def test_a_command_is_accepted_exactly_when_legal_and_a_rejected_one_changes_nothing(
    game: Game,
) -> None:
    rng = random.Random(game.choices + 1)
    for before, _, _, _ in played(game):
        snapshot = msgspec.msgpack.encode(before)
        status = RULES.status(before)
        for _ in range(4):
            command = wild_command(before, rng)
            try:
                RULES.decide(before, command)
            except RuleViolation:
                assert msgspec.msgpack.encode(before) == snapshot
                continue
            if isinstance(command, DealHand):
                assert status.phase == "awaiting_deal"
                continue
            legal = RULES.legal_actions(before, command.seat)
            assert any(RULES.covers(option, command.action) for option in legal)
        if status.phase == "playing":
            seat = status.to_act[0]
            for action in (a for o in RULES.legal_actions(before, seat) for a in expand(o)):
                RULES.decide(before, Act(seat, action))
