"""What a seat may do now, as predicates and position masks.

`decide` and `legal_actions` both ask these, so a listed action is always accepted and an
accepted action is always listed.
"""

from __future__ import annotations

from domain.grid.layout import full_mask, may_turn_in_setup, positions
from domain.grid.rules import GridRules
from domain.grid.state import GridState


def pile_of(rules: GridRules, seat: int) -> int:
    """The discard pile a seat's cards go to."""
    return 0 if rules.piles == "shared" else seat


def face_down(rules: GridRules, state: GridState, seat: int) -> int:
    return full_mask(rules.columns) & ~state.face_up[seat]


def replaceable(rules: GridRules, state: GridState, seat: int) -> int:
    if rules.replace == "face-down":
        return face_down(rules, state, seat)
    return full_mask(rules.columns)


def setup_choices(rules: GridRules, state: GridState, seat: int) -> int:
    """The positions a seat may turn up as its next setup flip."""
    if state.setup_left[seat] <= 0:
        return 0
    turned = state.face_up[seat]
    mask = 0
    for at in positions(face_down(rules, state, seat)):
        if may_turn_in_setup(rules, turned, at):
            mask |= 1 << at
    return mask


def may_peek(rules: GridRules, state: GridState, seat: int) -> bool:
    """Once, before the seat's first draw of the hand."""
    if rules.peek_row is None or state.phase not in ("setup", "playing"):
        return False
    if state.peeked[seat] or state.turns[seat]:
        return False
    return not (seat == state.to_play and state.step not in ("setup", "draw"))


def may_take(rules: GridRules, state: GridState, seat: int) -> bool:
    """Whether a card from a pile or the centre could be taken: it must be keepable."""
    return not rules.keep_taken_card or replaceable(rules, state, seat) != 0


def may_discard(rules: GridRules, state: GridState) -> bool:
    """Whether the card in hand may be discarded rather than placed."""
    if state.drawn_from == "stock":
        return rules.discard_stock_card != "never"
    return not rules.keep_taken_card


def step_after_keeping(rules: GridRules, state: GridState, seat: int) -> str:
    """After a replace: Golf's go-out choice with one face-down card left, else the turn ends."""
    if rules.last_card_choice and face_down(rules, state, seat).bit_count() == 1:
        return "finish"
    return "over"


def step_after_discard(rules: GridRules, state: GridState, seat: int) -> str:
    hidden = face_down(rules, state, seat).bit_count()
    match rules.discard_stock_card if state.drawn_from == "stock" else "no-flip":
        case "flip" if hidden:
            return "flip"
        case "flip-unless-last" if hidden >= 2:
            return "flip"
        case "flip-unless-last" if hidden == 1:
            return "finish"
    if rules.last_card_choice and hidden == 1:
        return "finish"
    return "over"


def has_finish_step(rules: GridRules) -> bool:
    return rules.last_card_choice or rules.discard_stock_card == "flip-unless-last"


def has_flip_step(rules: GridRules) -> bool:
    return rules.discard_stock_card in ("flip", "flip-unless-last")
