"""The v2 hand seed (docs/SHUFFLE.md, section 8): the documented figures are what the code
does, the encoding is unambiguous, and a deal re-derives from the seeds revealed."""

from __future__ import annotations

import hashlib
import hmac

import pytest
from hypothesis import assume, given, settings
from hypothesis import strategies as st

from domain.cards import make_deck
from domain.errors import RuleViolation
from domain.grid import TENS
from domain.shuffle import (
    SHUFFLE_V2,
    Stream,
    commitment,
    hand_seed,
    hand_seed_message,
    valid_seat_seed,
)
from events.schema.common import DealHand, GameOptions, HandDealt

pytestmark = pytest.mark.unit

SERVER = bytes(range(32))


def test_the_documented_message_and_seed() -> None:
    message = hand_seed_message(1, ["Ada", "Grace"])
    assert message.hex() == (
        "00000014666169727761792f68616e642d736565642f7632"  # the tag, length-prefixed
        "0000000000000001"  # the nonce
        "00000002"  # two seats
        "00000003416461"  # "Ada"
        "000000054772616365"  # "Grace"
    )
    seed = hand_seed(SERVER, 1, ["Ada", "Grace"])
    assert seed == hmac.new(SERVER, message, hashlib.sha256).digest()
    assert seed.hex() == "c22a10b273779d35d2f4692b94a8f981fb3650bb51a0f912cd11548beeb5a77b"
    word, _ = Stream(seed).word()
    assert word == 0x2D49ABCBB864A253
    dealer, stream = Stream(seed).below(2)
    deck, stream = stream.shuffled(make_deck(1))
    assert dealer == 1
    assert deck[:10] == ("9C", "7C", "TC", "5S", "AS", "9S", "6S", "5D", "JD", "AD")
    assert stream.position == 52


def test_a_seat_seed_is_utf8_and_its_length_counts_bytes() -> None:
    message = hand_seed_message(1, ["Zoë 🂡", "Ada"])
    assert message.hex().endswith("000000095a6fc3ab20f09f82a100000003416461")
    seed = hand_seed(SERVER, 1, ["Zoë 🂡", "Ada"])
    assert seed.hex() == "443002a7689bc85f0040cdd868524302c6440f41cc5d87f6de25983aac5106d5"


def test_the_commitment_of_a_v2_hand_is_sha256_of_its_server_seed() -> None:
    state = TENS.initial_state(2, GameOptions())
    command = DealHand(server_seed=SERVER.hex(), seat_seeds=("Ada", "Grace"))
    (dealt,) = TENS.decide(state, command)
    assert dealt == HandDealt(
        hand=1,
        dealer=1,
        seed="c22a10b273779d35d2f4692b94a8f981fb3650bb51a0f912cd11548beeb5a77b",
        commitment=commitment(SERVER),
        shuffle=SHUFFLE_V2,
        server_seed=SERVER.hex(),
        seat_seeds=("Ada", "Grace"),
        nonce=1,
    )


@pytest.mark.parametrize(
    ("seeds", "why"),
    [
        (("a",), "one seed for two seats"),
        (("a", "b", "c"), "three seeds for two seats"),
        (("a", ""), "an empty seed"),
        (("a", "x" * 129), "a seed of 129 characters"),
    ],
)
def test_a_deal_refuses_seat_seeds_out_of_bounds(seeds: tuple[str, ...], why: str) -> None:
    state = TENS.initial_state(2, GameOptions())
    with pytest.raises(RuleViolation) as refused:
        TENS.decide(state, DealHand(server_seed=SERVER.hex(), seat_seeds=seeds))
    assert refused.value.code == "invalid_config", why


def test_a_deal_takes_a_name_standing_in_for_a_seed_whatever_its_characters() -> None:
    """A seat's name is its seed when it set none; a name may hold characters that the API
    refuses in a seed (private use, a soft hyphen), and the deal must still go ahead."""
    state = TENS.initial_state(2, GameOptions())
    seats = ("\ue000 private", "soft\u00adhyphen")
    (dealt,) = TENS.decide(state, DealHand(server_seed=SERVER.hex(), seat_seeds=seats))
    assert dealt.seat_seeds == seats


def test_a_v2_deal_takes_no_ready_made_seed_and_a_server_seed_in_lowercase_hex() -> None:
    state = TENS.initial_state(2, GameOptions())
    for command in (
        DealHand(seed=SERVER.hex(), server_seed=SERVER.hex(), seat_seeds=("a", "b")),
        DealHand(server_seed=SERVER.hex().upper(), seat_seeds=("a", "b")),
        DealHand(server_seed="ab", seat_seeds=("a", "b")),
    ):
        with pytest.raises(RuleViolation):
            TENS.decide(state, command)


def test_the_encoding_tells_apart_seeds_that_concatenate_alike() -> None:
    assert hand_seed_message(1, ["ab", "c"]) != hand_seed_message(1, ["a", "bc"])
    assert hand_seed_message(1, ["a", ""]) != hand_seed_message(1, ["a"])
    assert hand_seed_message(1, ["a"]) != hand_seed_message(256, ["a"])


def test_every_printable_seed_of_1_to_128_characters_is_valid_and_nothing_else() -> None:
    assert valid_seat_seed("x")
    assert valid_seat_seed("é" * 128)
    assert valid_seat_seed("  spaces are fine  ")
    assert not valid_seat_seed("")
    assert not valid_seat_seed("x" * 129)
    assert not valid_seat_seed("new\nline")
    assert not valid_seat_seed("zero\u200bwidth")


SEAT_SEED = st.text(
    st.characters(categories=("L", "M", "N", "P", "S", "Zs")), min_size=1, max_size=128
).filter(str.isprintable)
"""Printable seeds, drawn from printable categories so that the filter rarely rejects one
(drawn from all of Unicode, most long texts hold a control character: Hypothesis's
health check then fails the test now and then)."""


@settings(max_examples=60, deadline=None)
@given(server=st.binary(min_size=32, max_size=32), a=SEAT_SEED, b=SEAT_SEED, c=SEAT_SEED)
def test_a_deal_re_derives_from_the_seeds_it_reveals(server: bytes, a: str, b: str, c: str) -> None:
    """Given any seeds, the dealt layouts and stock are the documented shuffle of the HMAC
    of the revealed server seed over the public seat seeds, and nothing else."""
    state = TENS.initial_state(3, GameOptions())
    (dealt,) = TENS.decide(state, DealHand(server_seed=server.hex(), seat_seeds=(a, b, c)))
    after = TENS.evolve(state, dealt)
    seed = hmac.new(server, hand_seed_message(1, [a, b, c]), hashlib.sha256).digest()
    assert dealt.seed == seed.hex()
    assert dealt.commitment == hashlib.sha256(server).hexdigest()
    dealer, stream = Stream(seed).below(3)
    deck, _ = stream.shuffled(make_deck(1))
    assert dealt.dealer == dealer
    assert after.stock == deck
    assert after.layouts[(dealer + 1) % 3] == deck[:10]


@settings(max_examples=40, deadline=None)
@given(server=st.binary(min_size=32, max_size=32), a=SEAT_SEED, b=SEAT_SEED, other=SEAT_SEED)
def test_any_one_seat_changing_its_seed_changes_the_deal(
    server: bytes, a: str, b: str, other: str
) -> None:
    assume(other != b)
    state = TENS.initial_state(2, GameOptions())
    (first,) = TENS.decide(state, DealHand(server_seed=server.hex(), seat_seeds=(a, b)))
    (second,) = TENS.decide(state, DealHand(server_seed=server.hex(), seat_seeds=(a, other)))
    assert first.seed != second.seed
    assert TENS.evolve(state, first).stock != TENS.evolve(state, second).stock
