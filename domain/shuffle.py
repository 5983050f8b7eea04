"""The seeded shuffle: language-independent, so anyone can re-derive a deal from its seed.

The algorithm is specified in docs/SHUFFLE.md. In short: a stream of 64-bit words, word k
being the first 8 bytes (big-endian) of SHA-256(seed || k as 8 bytes big-endian); a uniform
integer below n rejects words >= floor(2**64 / n) * n; the deck is shuffled by Fisher-Yates
from the last position down. The stream is a value (seed, next word index) so a hand's later
draws (reshuffles, Tens-shedding grabs) continue where the deal stopped.
"""

from __future__ import annotations

import hashlib
from collections.abc import Sequence
from typing import TypeVar

import msgspec

T = TypeVar("T")

_WORD = 1 << 64


class Stream(msgspec.Struct, frozen=True):
    seed: bytes
    position: int = 0

    def word(self) -> tuple[int, Stream]:
        digest = hashlib.sha256(self.seed + self.position.to_bytes(8, "big")).digest()
        return int.from_bytes(digest[:8], "big"), Stream(self.seed, self.position + 1)

    def below(self, n: int) -> tuple[int, Stream]:
        """A uniform integer in [0, n), by rejection sampling."""
        if n <= 0:
            raise ValueError("n must be positive")
        limit = (_WORD // n) * n
        stream = self
        while True:
            value, stream = stream.word()
            if value < limit:
                return value % n, stream

    def shuffled(self, items: Sequence[T]) -> tuple[tuple[T, ...], Stream]:
        """Fisher-Yates: for i from len-1 down to 1, swap item i with item below(i + 1)."""
        out = list(items)
        stream = self
        for i in range(len(out) - 1, 0, -1):
            j, stream = stream.below(i + 1)
            out[i], out[j] = out[j], out[i]
        return tuple(out), stream


def commitment(seed: bytes) -> str:
    """The fair-deal commitment published when a hand is dealt: hex SHA-256 of the seed."""
    return hashlib.sha256(seed).hexdigest()


def derive_seed(master: bytes, index: int) -> bytes:
    """A reproducible per-hand seed from a master seed (simulations and tests, not live play)."""
    return hashlib.sha256(b"fairway/derive" + master + index.to_bytes(8, "big")).digest()
