"""The seed chain (docs/SHUFFLE.md, section 9): x_(k-1) = SHA-256(x_k), anchor x_0."""

from __future__ import annotations

import hashlib

import pytest

from domain.seed_chain import hashed, new_chain

pytestmark = pytest.mark.unit

SECRET = bytes(range(32))


def test_the_documented_chain() -> None:
    chain = new_chain(SECRET, 1, 3)
    assert chain.anchor == "4e05063392f42b5180353ef82da86c714042155044d91ab3253f1bab08120a0a"
    assert chain.server_seed(1).hex() == (
        "2f287b4d3d4910f6cada9e1bd1b4648099e8c52c81aa4a6aebfa6fc86f19834e"
    )
    assert chain.server_seed(2).hex() == (
        "630dcd2966c4336691125448bbb25b4ff412a49c732db2c8abc1b8581bd710dd"
    )
    assert chain.server_seed(3) == SECRET


def test_each_link_hashes_to_the_one_before_and_the_first_to_the_anchor() -> None:
    chain = new_chain(SECRET, 11, 20)
    assert hashlib.sha256(chain.server_seed(11)).hexdigest() == chain.anchor
    for hand in range(12, 31):
        assert hashlib.sha256(chain.server_seed(hand)).digest() == chain.server_seed(hand - 1)
    assert hashed(SECRET, 20).hex() == chain.anchor


def test_a_chain_covers_its_hands_only() -> None:
    chain = new_chain(SECRET, 11, 20)
    assert (chain.first_hand, chain.last_hand) == (11, 30)
    assert not chain.covers(10)
    assert not chain.covers(31)
    with pytest.raises(ValueError, match="not in the chain"):
        chain.server_seed(31)
    with pytest.raises(ValueError, match="32-byte secret"):
        new_chain(SECRET[:31], 1, 3)
