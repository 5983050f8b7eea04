"""Where a tournament's randomness comes from, so that anyone can check it afterwards and
no single party controls it (docs/TOURNAMENTS.md, "Fair seating and duplicate deals").

`tournament.created` commits the anchor x_0 of a seed chain over the rounds (domain/
seed_chain.py): round r's seed x_r is fixed before any player registers and revealed in
`round.closed`. From x_r follow
- the random seating of round 1: a shuffle of the players (sorted by name) by the stream
  of `seating_seed(x_r, r)`;
- with duplicate deals, the seed chain every table of round r deals from
  (`round_chain(x_r, hands)`), and the one seat seed every seat of every table deals with,
  `round_seat_seed(r, seeds)`, over each registered player's seed (their name where they
  set none). A player's seed set after x_r was committed changes every deal of the round,
  and x_r, unknown to the players, changes it too: neither the service nor any player
  chooses the cards.
"""

from __future__ import annotations

import hashlib
import hmac
from collections.abc import Sequence

from domain.seed_chain import SeedChain, new_chain

SEATING_TAG = b"fairway/tournament/seating/v1"
ROUND_CHAIN_TAG = b"fairway/tournament/round-chain/v1"
SEAT_SEED_TAG = b"fairway/tournament/seat-seed/v1"


def _prefixed(data: bytes) -> bytes:
    return len(data).to_bytes(4, "big") + data


def seating_seed(round_seed: bytes, round_number: int) -> bytes:
    """The seed of round `round_number`'s random seating: HMAC(x_r, tag || r)."""
    message = _prefixed(SEATING_TAG) + round_number.to_bytes(8, "big")
    return hmac.new(round_seed, message, hashlib.sha256).digest()


def round_chain(round_seed: bytes, hands: int) -> SeedChain:
    """The seed chain of every table of a duplicate round: its secret is HMAC(x_r, tag),
    so the chain is committed as soon as x_r is (in `tournament.created`'s anchor)."""
    secret = hmac.new(round_seed, _prefixed(ROUND_CHAIN_TAG), hashlib.sha256).digest()
    return new_chain(secret, 1, hands)


def round_seat_seed(round_number: int, seeds: Sequence[tuple[str, str]]) -> str:
    """The seat seed of a duplicate round: hex SHA-256 over the round and every (player,
    seed) pair, sorted by player, each part length-prefixed so no two inputs share bytes."""
    parts = [_prefixed(SEAT_SEED_TAG), round_number.to_bytes(8, "big")]
    parts.append(len(seeds).to_bytes(4, "big"))
    for player, seed in sorted(seeds):
        parts += [_prefixed(player.encode()), _prefixed(seed.encode())]
    return hashlib.sha256(b"".join(parts)).hexdigest()
