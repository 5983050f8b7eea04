"""The seeded shuffle: language-independent, so anyone can re-derive a deal from its seed.

The algorithm is specified in docs/SHUFFLE.md. In short: a stream of 64-bit words, word k
being the first 8 bytes (big-endian) of SHA-256(seed || k as 8 bytes big-endian); a uniform
integer below n rejects words >= floor(2**64 / n) * n; the deck is shuffled by Fisher-Yates
from the last position down. The stream is a value (seed, next word index) so a hand's later
draws (reshuffles, Tens-shedding grabs) continue where the deal stopped.

Where the seed comes from is named by `HandDealt.shuffle`. `sha256-fisher-yates-v1`: the
service drew it alone. `hmac-seat-seeds-v2`: it is HMAC-SHA256 keyed by the server seed
(the hand's link of a seed chain committed before any seat existed) over every seat's own
seed, so no single party controls the deal (`hand_seed`).
"""

from __future__ import annotations

import hashlib
import hmac
import struct
from collections.abc import Sequence
from typing import TypeVar

import msgspec

from domain.errors import RuleViolation
from events.schema.common import DealHand, HandDealt

T = TypeVar("T")

SHUFFLE_V1 = "sha256-fisher-yates-v1"
"""The service drew the hand's seed alone; `commitment` = SHA-256(seed)."""
SHUFFLE_V2 = "hmac-seat-seeds-v2"
"""seed = HMAC-SHA256(server seed, message(nonce, seat seeds)); `commitment` =
SHA-256(server seed), which is the seed chain's previous link."""
HAND_SEED_TAG = b"fairway/hand-seed/v2"
SEAT_SEED_MAX = 128
"""A seed a seat sets is 1..128 printable characters (str.isprintable: no control, format,
private-use, unassigned character, no separator but the space); a deal takes any 1..128."""

_WORD = 1 << 64
_FIRST_WORD = struct.Struct(">Q")
"""A digest's first 8 bytes as a big-endian integer: a stream's word."""


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
        """Fisher-Yates: for i from len-1 down to 1, swap item i with item below(i + 1).

        The words and the rejection of `below`, written out in one loop: every deal and
        every replay of one (the projections refold each game) draws a word a card, and
        the calls and the `Stream` made per word were two thirds of a deal's cost. The
        same words in the same order as `word` and `below` (tests/unit/domain/test_shuffle.py).
        """
        out = list(items)
        seed, position = self.seed, self.position
        sha256, word_of = hashlib.sha256, _FIRST_WORD.unpack_from
        for i in range(len(out) - 1, 0, -1):
            n = i + 1
            limit = (_WORD // n) * n
            while True:
                value = word_of(sha256(seed + position.to_bytes(8, "big")).digest())[0]
                position += 1
                if value < limit:
                    break
            j = value % n
            out[i], out[j] = out[j], out[i]
        return tuple(out), Stream(seed, position)


def commitment(seed: bytes) -> str:
    """The fair-deal commitment published when a hand is dealt: hex SHA-256 of the seed."""
    return hashlib.sha256(seed).hexdigest()


def derive_seed(master: bytes, index: int) -> bytes:
    """A reproducible per-hand seed from a master seed (simulations and tests, not live play)."""
    return hashlib.sha256(b"fairway/derive" + master + index.to_bytes(8, "big")).digest()


# ---- hmac-seat-seeds-v2: the hand's seed from the server's and every seat's ---------------


def _prefixed(data: bytes) -> bytes:
    return len(data).to_bytes(4, "big") + data


def hand_seed_message(nonce: int, seat_seeds: Sequence[str]) -> bytes:
    """The HMAC's message: every part length-prefixed or of fixed size, so no two inputs
    share one encoding (docs/SHUFFLE.md, section 8)."""
    parts = [_prefixed(HAND_SEED_TAG), nonce.to_bytes(8, "big"), len(seat_seeds).to_bytes(4, "big")]
    parts += [_prefixed(seed.encode()) for seed in seat_seeds]
    return b"".join(parts)


def hand_seed(server_seed: bytes, nonce: int, seat_seeds: Sequence[str]) -> bytes:
    """The 32-byte seed the hand's stream starts from."""
    message = hand_seed_message(nonce, seat_seeds)
    return hmac.new(server_seed, message, hashlib.sha256).digest()


def valid_seat_seed(seed: str) -> bool:
    return 1 <= len(seed) <= SEAT_SEED_MAX and seed.isprintable()


class HandSeeds(msgspec.Struct, frozen=True):
    """What a deal reads and records: the stream's seed and the fields of `hand.dealt`."""

    seed: bytes
    commitment: str
    shuffle: str
    server_seed: str = ""
    seat_seeds: tuple[str, ...] = ()
    nonce: int = 0

    def dealt(self, hand: int, dealer: int) -> HandDealt:
        return HandDealt(
            hand,
            dealer,
            self.seed.hex(),
            self.commitment,
            self.shuffle,
            self.server_seed,
            self.seat_seeds,
            self.nonce,
        )


def _seed_bytes(text: str, what: str) -> bytes:
    try:
        seed = bytes.fromhex(text)
    except ValueError:
        seed = b""
    if len(seed) != 32 or seed.hex() != text:
        raise RuleViolation("invalid_config", f"{what} is 32 bytes in lowercase hex")
    return seed


def hand_seeds(command: DealHand, hand: int, players: int) -> HandSeeds:
    """The seeds of hand `hand` from a `DealHand`: derived from the server seed and one
    seed per seat when it has a server seed, else its `seed` as it is (v1)."""
    if not command.server_seed:
        seed = _seed_bytes(command.seed, "a hand's seed")
        return HandSeeds(seed, commitment(seed), SHUFFLE_V1)
    if command.seed:
        raise RuleViolation("invalid_config", "a v2 deal derives its seed: give none")
    server = _seed_bytes(command.server_seed, "a server seed")
    if len(command.seat_seeds) != players:
        raise RuleViolation("invalid_config", f"a deal needs {players} seat seeds")
    # Length only: a seat's name stands in for a seed it never set, and a name may hold
    # characters a set seed may not (the API refuses those in a seed it is sent).
    if not all(1 <= len(seed) <= SEAT_SEED_MAX for seed in command.seat_seeds):
        raise RuleViolation("invalid_config", "a seat seed is 1..128 characters")
    seed = hand_seed(server, hand, command.seat_seeds)
    return HandSeeds(
        seed, commitment(server), SHUFFLE_V2, command.server_seed, command.seat_seeds, hand
    )
