"""Deals: the next hand from its link of the game's seed chain and the seats' seeds, and the
chains themselves (committed when a game is created, extended when it outlasts one)."""

from __future__ import annotations

import secrets
from typing import Any

import msgspec

from domain.decider import Decider
from domain.seed_chain import SeedChain, new_chain
from events.schema.common import DealHand
from events.schema.lobby import SeedChainExtended
from service.contract.problems import ApiError
from service.play.record import GameRecord

CHAIN_FIELDS = ("seed_anchor", "seed_secret")
"""Where a created stream (a game, a tournament) commits its seed chain."""


def first_chain(initial: Any, chain_hands: int) -> SeedChain:
    """The seed chain of every hand of a new game, committed before any seat exists."""
    return new_chain(secrets.token_bytes(32), 1, chain_length(initial, chain_hands))


def chain_length(initial: Any, chain_hands: int) -> int:
    """The hands a game's first seed chain covers: as many as the game has (`initial`, its
    state before the first deal), else `chain_hands` (then extended as it goes on)."""
    fixed = getattr(initial, "hands", None)
    return fixed if isinstance(fixed, int) and fixed > 0 else chain_hands


def alike_but_chain(stored: msgspec.Struct, made: msgspec.Struct) -> bool:
    """Whether a stored creation is the one `made` asks for. A retried create draws another
    secret for its chain: the stored event is then told from this one by it alone."""
    blank = dict.fromkeys(CHAIN_FIELDS, "")
    return bool(msgspec.structs.replace(stored, **blank) == msgspec.structs.replace(made, **blank))


def deal(record: GameRecord, decider: Decider, state: Any, chain_hands: int) -> list[Any]:
    """The next hand's deal when one is due, from its link of the seed chain and the seats'
    seeds. A game created before seed chains keeps the v1 deal (a fresh secret seed).

    The deal of a chain's last hand, in a game that may go on (no fixed number of hands),
    commits the next chain in the same write: seats' seeds set after it count for its
    hands, those set before do not (docs/SHUFFLE.md, "A game that outlasts its chain")."""
    status = decider.status(state)
    if status.phase != "awaiting_deal":
        return []
    if not record.chains:
        return list(decider.decide(state, DealHand(secrets.token_bytes(32).hex())))
    hand = status.hand + 1
    chain = record.chain_for(hand)
    if chain is None:  # only if an extension was lost: never dealt outside a chain
        raise ApiError(500, "internal_error", f"no seed chain covers hand {hand}")
    command = DealHand(
        server_seed=chain.server_seed(hand).hex(), seat_seeds=record.lobby.deal_seeds()
    )
    events = list(decider.decide(state, command))
    if hand == chain.last_hand and getattr(state, "hands", None) is None:
        following = new_chain(secrets.token_bytes(32), hand + 1, chain_hands)
        events.append(
            SeedChainExtended(
                following.first_hand, following.hands, following.anchor, following.secret
            )
        )
    return events
