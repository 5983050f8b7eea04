"""What a viewer may know: the one road from a Tens-shedding state outward.

Public: face-up stack cards, hand sizes, which face-down cards remain and which are
uncovered, the pile and the burned cards, grabs and bonuses, whose turn, scores, the seed's
commitment. A seat alone: its hand (during setup, the 15 cards it chooses from). Nobody
while the round is live: face-down cards, undealt cards, the seed. Once the round has
ended, everything about it.
"""

from __future__ import annotations

from typing import Any

import msgspec
from msgspec.structs import replace

from domain.cards import Card, rank_order
from domain.decider import Phase, Viewer
from domain.shedding.rules import grab_bonus, top_rank
from domain.shedding.state import Player, Round, SheddingState, status
from events.schema.common import HandDealt


class PlayerView(msgspec.Struct, frozen=True):
    seat: int
    total: int
    """Cumulative total of completed rounds."""
    grab: int | None = None
    bonus: int = 0
    hand_size: int = 0
    stacks_chosen: bool = False
    face_up: tuple[Card | None, ...] = ()
    """One per stack: the face-up card, or None (not chosen yet, or played)."""
    face_down: tuple[bool, ...] = ()
    """One per stack: whether its face-down card is still there."""
    uncovered: tuple[bool, ...] = ()
    """One per stack: a face-down card whose face-up card is gone, playable blind."""
    hand: tuple[Card, ...] | None = None
    """The viewer's own hand (during setup, the 15 cards to choose from); everyone's once
    the round has ended."""
    face_down_cards: tuple[Card | None, ...] | None = None
    """Only once the round has ended: the face-down cards still on the stacks."""
    score: int | None = None
    """This round's score, once it has ended."""


class OpenPlayView(msgspec.Struct, frozen=True):
    """A blind card was turned; `seat` may add cards of `rank` or end the play."""

    seat: int
    stack: int
    rank: str
    rank_before: str | None


class SheddingView(msgspec.Struct, frozen=True, tag_field="family", tag="shedding"):
    """A game of Tens-shedding as one viewer (a seat, or None for a spectator) may know it.
    A round of the rules is a hand here, as in every variant."""

    viewer: int | None
    phase: Phase
    hand: int
    """The current or last hand (round), 1-based; 0 before the first deal."""
    players: tuple[PlayerView, ...]
    totals: tuple[int, ...]
    to_act: tuple[int, ...] = ()
    variant: str = "tens-shedding"
    dealer: int | None = None
    first_player: int | None = None
    to_play: int | None = None
    """Whose turn it is; None during setup and once the hand has ended."""
    commitment: str | None = None
    seed: str | None = None
    """Revealed once the round has ended."""
    pile: tuple[Card, ...] = ()
    """Bottom to top."""
    current_rank: str | None = None
    burned: tuple[Card, ...] = ()
    burned_count: int = 0
    open_play: OpenPlayView | None = None
    plays: int = 0
    turn_limit: int = 0
    undealt_count: int = 0
    undealt: tuple[Card, ...] | None = None
    """Only once the round has ended."""
    ended: str | None = None
    """Why the round ended: `went_out` or `turn_limit`."""
    went_out: int | None = None
    winners: tuple[int, ...] = ()


def _sorted(cards: tuple[Card, ...]) -> tuple[Card, ...]:
    return tuple(sorted(cards, key=lambda card: (rank_order(card[0]), card[1])))


def _player_view(
    seat: int, player: Player, round_: Round, state: SheddingState, viewer: Viewer
) -> PlayerView:
    over = round_.ended is not None
    return PlayerView(
        seat=seat,
        total=state.totals[seat],
        grab=player.grab,
        bonus=grab_bonus(player.grab),
        hand_size=len(player.hand),
        stacks_chosen=player.chosen,
        face_up=player.face_up,
        face_down=tuple(card is not None for card in player.face_down),
        uncovered=tuple(player.uncovered(stack) for stack in range(len(player.face_down))),
        hand=_sorted(player.hand) if over or seat == viewer else None,
        face_down_cards=player.face_down if over else None,
        score=round_.scores[seat] if over else None,
    )


def view(state: SheddingState, viewer: Viewer) -> SheddingView:
    round_ = state.round
    if round_ is None:
        return SheddingView(
            viewer=viewer,
            phase=state.phase,
            hand=0,
            players=tuple(PlayerView(seat, 0) for seat in range(state.players)),
            totals=state.totals,
            turn_limit=state.rules.turn_limit,
        )
    over = round_.ended is not None
    open_play = round_.open_play
    went_out = [seat for seat, p in enumerate(round_.players) if p.card_count() == 0]
    return SheddingView(
        viewer=viewer,
        phase=state.phase,
        hand=round_.number,
        players=tuple(
            _player_view(seat, p, round_, state, viewer) for seat, p in enumerate(round_.players)
        ),
        totals=state.totals,
        to_act=status(state).to_act,
        dealer=round_.dealer,
        first_player=round_.first,
        to_play=None if over or state.phase != "playing" else round_.turn,
        commitment=round_.commitment,
        seed=round_.seed if over else None,
        pile=round_.pile,
        current_rank=top_rank(round_.pile),
        burned=round_.burned,
        burned_count=len(round_.burned),
        open_play=None if open_play is None else OpenPlayView(**msgspec.structs.asdict(open_play)),
        plays=round_.plays,
        turn_limit=state.rules.turn_limit,
        undealt_count=len(round_.undealt),
        undealt=round_.undealt if over else None,
        ended=round_.ended,
        went_out=went_out[0] if went_out else None,
        winners=state.winners,
    )


def redact(event: Any, viewer: Viewer, hand_over: bool) -> Any:
    """Only the seed is secret in a live round's events; every card an event names was
    public when it happened."""
    if isinstance(event, HandDealt) and not hand_over:
        return replace(event, seed="", server_seed="")
    return event


class PlayerTable(msgspec.Struct, frozen=True):
    """One seat's cards with nothing hidden."""

    seat: int
    total: int
    grab: int
    hand: tuple[Card, ...]
    """As held (during setup, the 15 cards to choose from)."""
    face_up: tuple[Card | None, ...]
    face_down: tuple[Card | None, ...]
    stacks_chosen: bool


class SheddingTable(msgspec.Struct, frozen=True, tag_field="family", tag="shedding"):
    """A game of Tens-shedding with nothing hidden: every hand, every face-down card, the
    undealt cards. Only for a round that is over (replay, audit)."""

    phase: Phase
    hand: int
    totals: tuple[int, ...]
    players: tuple[PlayerTable, ...] = ()
    dealer: int | None = None
    first_player: int | None = None
    to_play: int | None = None
    commitment: str | None = None
    seed: str | None = None
    pile: tuple[Card, ...] = ()
    burned: tuple[Card, ...] = ()
    open_play: OpenPlayView | None = None
    plays: int = 0
    undealt: tuple[Card, ...] = ()
    ended: str | None = None
    scores: tuple[int, ...] = ()
    winners: tuple[int, ...] = ()


def table(state: SheddingState) -> SheddingTable:
    """Everything about `state`: what replay and audit show once a round is over."""
    round_ = state.round
    if round_ is None:
        return SheddingTable(phase=state.phase, hand=0, totals=state.totals)
    open_play = round_.open_play
    return SheddingTable(
        phase=state.phase,
        hand=round_.number,
        totals=state.totals,
        players=tuple(
            PlayerTable(seat, state.totals[seat], p.grab, p.hand, p.face_up, p.face_down, p.chosen)
            for seat, p in enumerate(round_.players)
        ),
        dealer=round_.dealer,
        first_player=round_.first,
        to_play=round_.turn if round_.ended is None and state.phase == "playing" else None,
        commitment=round_.commitment,
        seed=round_.seed,
        pile=round_.pile,
        burned=round_.burned,
        open_play=None if open_play is None else OpenPlayView(**msgspec.structs.asdict(open_play)),
        plays=round_.plays,
        undealt=round_.undealt,
        ended=round_.ended,
        scores=round_.scores,
        winners=state.winners,
    )
