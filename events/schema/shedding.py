"""Tens-shedding: the actions a seat may send and the events a round records.

Actions carry no seat: the seat arrives in `Act(seat, action)` from who is asking. Every
card an event names was public the moment the event happened (face-up stack cards, cards
played onto the pile, the pile itself), so no field here needs redaction; only the
`HandDealt` seed is secret while a round is live.
"""

from __future__ import annotations

from typing import Annotated

import msgspec

from events.schema.common import CardText, Seat

StackIndex = Annotated[int, msgspec.Meta(ge=0, le=3, description="A stack, 0..3")]

# ---- actions --------------------------------------------------------------------------------


class ChooseStacks(msgspec.Struct, frozen=True, forbid_unknown_fields=True, tag="choose-stacks"):
    """Setup: lay 4 of your 15 non-stack cards face up on your stacks 0..3, in the order
    given; the other 11 become your hand. Every player chooses once, in any order; play
    starts when all have chosen."""

    cards: Annotated[tuple[CardText, ...], msgspec.Meta(min_length=4, max_length=4)]


class PlayCards(msgspec.Struct, frozen=True, forbid_unknown_fields=True, tag="play"):
    """Play one or more cards of a single rank onto the pile: `hand` names cards from your
    hand, `stacks` the indices (0..3) of your face-up stack cards, in any combination. Just
    after a blind card was turned, this adds cards of its rank to that same play."""

    hand: tuple[CardText, ...] = ()
    stacks: tuple[StackIndex, ...] = ()


class PlayBlind(msgspec.Struct, frozen=True, forbid_unknown_fields=True, tag="play-blind"):
    """Play the face-down card of stack `stack`, unseen; it must be uncovered (its face-up
    card has been played). It need not match the pile. Once it is turned you may add cards
    of its rank with `play`, or close the play with `end-play`."""

    stack: StackIndex


class EndPlay(msgspec.Struct, frozen=True, forbid_unknown_fields=True, tag="end-play"):
    """After a blind card was turned: add nothing more; the play is complete and its result
    (burn, next player, or pick up the pile) follows."""


SheddingAction = ChooseStacks | PlayCards | PlayBlind | EndPlay

# ---- options: what `legal_actions` lists ---------------------------------------------------
#
# Enumerating every legal action would explode (1,365 choices of face-up stack cards, every
# subset and order of a rank's cards), so a seat is offered options: an option stands for a
# family of concrete actions, and `type` names the action to send. `play-blind` and
# `end-play` are listed as the concrete actions themselves.

RankText = Annotated[
    str, msgspec.Meta(pattern=r"^[A2-9TJQK](?![\s\S])", description="A rank, A..K")
]


class ChooseStacksOption(
    msgspec.Struct, frozen=True, forbid_unknown_fields=True, tag="choose-stacks"
):
    """Send `{"type": "choose-stacks", "cards": [...]}` with any `count` (4) entries of
    `cards` (your 15 non-stack cards), in any order: stack i gets the i-th. A card listed
    twice (several decks) may be chosen twice; no entry may be used more often than listed."""

    count: int
    cards: tuple[CardText, ...]


class PlayOption(msgspec.Struct, frozen=True, forbid_unknown_fields=True, tag="play"):
    """Send `{"type": "play", "hand": [...], "stacks": [...]}` with any combination of these
    cards of `rank`, at least one card in all: `hand` any entries of this `hand` (a card
    listed twice may be named twice, none more often than listed), `stacks` any of these
    face-up stack indices, each at most once. Any order: the hand cards go onto the pile in
    the order given, then the stack cards, the last on top. Just after a blind card was
    turned, only its rank is offered."""

    rank: RankText
    hand: tuple[CardText, ...] = ()
    stacks: tuple[StackIndex, ...] = ()


SheddingOption = ChooseStacksOption | PlayOption | PlayBlind | EndPlay
"""What `legal_actions` lists for a Tens-shedding seat: `decide` accepts every action an
option covers, and every action it accepts is covered by a listed option."""

# ---- events ---------------------------------------------------------------------------------


class StacksChosen(msgspec.Struct, frozen=True, tag="stacks.chosen"):
    """A player laid these cards face up on stacks 0..3 (public from now on)."""

    seat: Seat
    cards: tuple[CardText, ...]


class CardsPlayed(msgspec.Struct, frozen=True, tag="cards.played"):
    """Cards of one rank went onto the pile: `hand` from the player's hand, then the face-up
    cards `stack_cards` from stacks `stacks`, in that order (the last is the new top)."""

    seat: Seat
    hand: tuple[CardText, ...] = ()
    stacks: tuple[int, ...] = ()
    stack_cards: tuple[CardText, ...] = ()


class BlindCardTurned(msgspec.Struct, frozen=True, tag="blind.card.turned"):
    """A face-down stack card was played blind and turned: it is now the top of the pile.
    The play stays open: the same player adds cards of its rank or ends the play."""

    seat: Seat
    stack: int
    card: CardText


class PileBurned(msgspec.Struct, frozen=True, tag="pile.burned"):
    """A Ten, or 4 or more consecutive cards of one rank on top: the pile left the round and
    the same player plays again."""

    seat: Seat
    cards: tuple[CardText, ...]


class PilePickedUp(msgspec.Struct, frozen=True, tag="pile.picked.up"):
    """A higher rank than the current one (not a Ten) was played: the player took the whole
    pile into their hand and plays again."""

    seat: Seat
    cards: tuple[CardText, ...]


class PlayPassed(msgspec.Struct, frozen=True, tag="play.passed"):
    """The play went onto an empty pile or at or below the current rank: `to` plays next."""

    seat: Seat
    to: Seat


EVENTS: tuple[type, ...] = (
    StacksChosen,
    CardsPlayed,
    BlindCardTurned,
    PileBurned,
    PilePickedUp,
    PlayPassed,
)

__all__ = [
    "EVENTS",
    "BlindCardTurned",
    "CardsPlayed",
    "ChooseStacks",
    "ChooseStacksOption",
    "EndPlay",
    "PileBurned",
    "PilePickedUp",
    "PlayBlind",
    "PlayCards",
    "PlayOption",
    "PlayPassed",
    "SheddingAction",
    "SheddingOption",
    "StacksChosen",
]
