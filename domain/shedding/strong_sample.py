"""A full Tens-shedding state consistent with one seat's view: the strong bot's determinization.

The seat sees its own hand, every face-up stack card, the pile and the burned cards, and how
many cards each other hand, each face-down stack and the undealt rest hold. Every other card
is, as far as it can tell, one of the deck less those it sees, dealt at random: `sample`
deals them (in a canonical order shuffled with the caller's Chooser, so the result depends
on the view and the rng alone) into the hidden places.
"""

from __future__ import annotations

from domain.bots.base import Chooser
from domain.cards import Card, make_deck
from domain.shedding.rules import Rules, decks_for
from domain.shedding.state import OpenPlay, Player, Round, SheddingState
from domain.shedding.view import SheddingView


def unseen(view: SheddingView) -> list[Card]:
    """The cards the seat cannot see, sorted: the deck less its hand, the face-up stack
    cards, the pile and the burned cards."""
    shown: list[Card] = [*view.pile, *view.burned]
    for player in view.players:
        shown.extend(card for card in player.face_up if card is not None)
        if player.seat == view.viewer and player.hand is not None:
            shown.extend(player.hand)
    deck = make_deck(decks_for(len(view.players)))
    return sorted(without_present(deck, shown))


def without_present(deck: tuple[Card, ...], shown: list[Card]) -> tuple[Card, ...]:
    """`deck` less one copy of each shown card it holds (a card it lacks is ignored)."""
    counts: dict[Card, int] = {}
    for card in shown:
        counts[card] = counts.get(card, 0) + 1
    present = []
    for card in deck:
        if counts.get(card, 0):
            counts[card] -= 1
            continue
        present.append(card)
    return tuple(present)


def shuffled(cards: list[Card], rng: Chooser) -> list[Card]:
    """A Fisher-Yates shuffle drawn from the Chooser."""
    out = list(cards)
    for i in range(len(out) - 1, 0, -1):
        j = rng.randrange(i + 1)
        out[i], out[j] = out[j], out[i]
    return out


def sample(view: SheddingView, pool: list[Card], rng: Chooser) -> SheddingState:
    """One full state the view could stand for, the hidden cards dealt from `pool` (the
    `unseen` cards) in an order drawn from `rng`."""
    deal = shuffled(pool, rng)
    taken = 0

    def take(count: int) -> tuple[Card, ...]:
        nonlocal taken
        cards = tuple(deal[taken : taken + count])
        taken += count
        return cards

    players = []
    for p in view.players:
        own = p.hand if p.seat == view.viewer else None
        hand = own if own is not None else take(p.hand_size)
        hidden = take(sum(p.face_down))
        it = iter(hidden)
        face_down = tuple(next(it) if there else None for there in p.face_down)
        players.append(
            Player(
                grab=p.grab or 0,
                hand=hand,
                face_up=p.face_up,
                face_down=face_down,
                chosen=p.stacks_chosen,
            )
        )
    open_play = view.open_play
    round_ = Round(
        number=view.hand,
        dealer=view.dealer or 0,
        seed="",
        commitment="",
        first=view.first_player or 0,
        players=tuple(players),
        undealt=take(view.undealt_count),
        turn=view.to_play if view.to_play is not None else 0,
        pile=view.pile,
        burned=view.burned,
        open_play=None
        if open_play is None
        else OpenPlay(open_play.seat, open_play.stack, open_play.rank, open_play.rank_before),
        plays=view.plays,
    )
    return SheddingState(
        players=len(view.players),
        rules=Rules(turn_limit=view.turn_limit),
        phase=view.phase,
        totals=view.totals,
        round=round_,
    )
