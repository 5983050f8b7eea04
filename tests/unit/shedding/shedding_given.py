"""Givens for the Tens-shedding rule tests: a dealt game, or a table laid out by hand."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import msgspec

from domain.errors import RuleViolation
from domain.shedding import TENS_SHEDDING
from domain.shedding.options import expand
from domain.shedding.rules import Rules
from domain.shedding.state import PLAYING, OpenPlay, Player, Round, SheddingState
from domain.shuffle import commitment, derive_seed
from events.schema.common import Act, DealHand, GameOptions

RULES = TENS_SHEDDING
SEED = derive_seed(b"tens-shedding tests", 0).hex()


def actions(state: SheddingState, seat: int) -> tuple[Any, ...]:
    """The seat's legal options expanded: one concrete action per distinct outcome."""
    return tuple(a for option in RULES.legal_actions(state, seat) for a in expand(option))


def seed(index: int) -> str:
    return derive_seed(b"tens-shedding tests", index).hex()


def fold(state: SheddingState, events: Sequence[Any]) -> SheddingState:
    for event in events:
        state = RULES.evolve(state, event)
    return state


def run(state: SheddingState, command: Any) -> tuple[tuple[Any, ...], SheddingState]:
    """When `command`: the events it causes and the state after them."""
    events = RULES.decide(state, command)
    return events, fold(state, events)


def dealt(players: int = 2, hand_seed: str = SEED, **options: Any) -> SheddingState:
    """Given a new game whose first round has just been dealt from `hand_seed`."""
    state = RULES.initial_state(players, GameOptions(**options))
    return run(state, DealHand(hand_seed))[1]


def stacks_chosen(state: SheddingState) -> SheddingState:
    """Given every player has chosen the first four of their 15 cards as face-up cards."""
    assert state.round is not None
    for seat, player in enumerate(state.round.players):
        state = run(state, Act(seat, actions(state, seat)[0]))[1]
        assert player.hand  # the 15 to choose from
    return state


def table(
    hands: Sequence[Sequence[str]],
    face_up: Sequence[Sequence[str | None]] | None = None,
    face_down: Sequence[Sequence[str | None]] | None = None,
    pile: Sequence[str] = (),
    turn: int = 0,
    grabs: Sequence[int] | None = None,
    totals: Sequence[int] | None = None,
    open_play: OpenPlay | None = None,
    plays: int = 0,
    turn_limit: int = 2000,
) -> SheddingState:
    """Given a round in play laid out card by card (face-up and face-down default to
    unplayable-looking filler: kings face up, queens face down)."""
    players = len(hands)
    ups = face_up or [["KS", "KH", "KD", "KC"]] * players
    downs = face_down or [["QS", "QH", "QD", "QC"]] * players
    seats = tuple(
        Player(
            grab=(grabs or [17] * players)[seat],
            hand=tuple(hands[seat]),
            face_up=tuple(ups[seat]),
            face_down=tuple(downs[seat]),
            chosen=True,
        )
        for seat in range(players)
    )
    round_ = Round(
        number=1,
        dealer=players - 1,
        seed=SEED,
        commitment=commitment(bytes.fromhex(SEED)),
        first=turn,
        players=seats,
        undealt=(),
        turn=turn,
        pile=tuple(pile),
        open_play=open_play,
        plays=plays,
    )
    return SheddingState(
        players=players,
        rules=Rules(turn_limit=turn_limit),
        phase=PLAYING,
        totals=tuple(totals or [0] * players),
        round=round_,
    )


def rejected(state: SheddingState, command: Any) -> str:
    """Then the command is rejected: returns the code; the state is unchanged."""
    before = msgspec.msgpack.encode(state)
    try:
        RULES.decide(state, command)
    except RuleViolation as violation:
        assert msgspec.msgpack.encode(state) == before
        return violation.code
    raise AssertionError(f"{command!r} was accepted")


def live(state: SheddingState) -> Round:
    assert state.round is not None
    return state.round
