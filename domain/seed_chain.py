"""The seed chain: every server seed of a game, committed before any seat exists.

The service draws a secret x_L and publishes the anchor x_0, where x_(k-1) = SHA-256(x_k).
Hand k (counted from the chain's first hand) is dealt from x_k and reveals it when it ends;
anyone checks SHA-256(x_k) against x_(k-1), the previous hand's revealed seed or the anchor.
Since SHA-256 cannot be run backwards, nobody learns x_k before it is revealed, and since
x_0 was fixed first, the service cannot pick x_k after seeing the seats' seeds.
"""

from __future__ import annotations

import hashlib

import msgspec

DEFAULT_HANDS = 1000
"""L for a game without a fixed number of hands (docs/SHUFFLE.md: what it costs)."""
MAX_CHAIN_HANDS = 100_000
"""The longest chain the service draws (FAIRWAY_SEED_CHAIN_HANDS at most)."""


def hashed(seed: bytes, times: int) -> bytes:
    """SHA-256 applied `times` times."""
    sha256 = hashlib.sha256  # bound once: the loop runs up to L times per deal
    for _ in range(times):
        seed = sha256(seed).digest()
    return seed


class SeedChain(msgspec.Struct, frozen=True):
    """A chain covering hands `first_hand` .. `last_hand`; `secret` is x_L in hex (empty
    where the reader may not know it), `anchor` x_0, `version` the event that committed it."""

    first_hand: int
    hands: int
    anchor: str
    secret: str = ""
    version: int = 1

    @property
    def last_hand(self) -> int:
        return self.first_hand + self.hands - 1

    def covers(self, hand: int) -> bool:
        return self.first_hand <= hand <= self.last_hand

    def link(self, hand: int) -> int:
        """k, the position of `hand` in the chain (1..L)."""
        return hand - self.first_hand + 1

    def server_seed(self, hand: int) -> bytes:
        """x_k for `hand`, from the secret (which the service alone holds while it plays)."""
        if not self.covers(hand):
            raise ValueError(f"hand {hand} is not in the chain {self.first_hand}..{self.last_hand}")
        return hashed(bytes.fromhex(self.secret), self.hands - self.link(hand))


def new_chain(secret: bytes, first_hand: int, hands: int, version: int = 1) -> SeedChain:
    """The chain drawn from `secret` (32 random bytes from the caller: the domain owns no
    random source)."""
    if len(secret) != 32 or hands < 1:
        raise ValueError("a chain is a 32-byte secret over at least one hand")
    return SeedChain(first_hand, hands, hashed(secret, hands).hex(), secret.hex(), version)
