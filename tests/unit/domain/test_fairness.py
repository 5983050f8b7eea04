"""`check_deals`: a fair game has no finding; each way a deal can be unfair is found.

Games are played in-process as the service stores them (tests/support/fair_games.py), then
one stored fact is altered, as a dishonest service or a rewritten history would."""

from __future__ import annotations

import hashlib
from typing import Any

import msgspec
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from domain.fairness import DealFinding, check_deals
from domain.shuffle import SHUFFLE_V1
from events.schema.common import GameOptions, HandDealt, HandEnded
from events.schema.lobby import GameCreated, SeatSeedSet, SeedChainExtended
from tests.support.fair_games import play

pytestmark = pytest.mark.unit

Events = list[tuple[int, Any]]


def golf(**kw: Any) -> Events:
    return play("golf", 3, GameOptions(hands=3, turn_limit=6), **kw)


def first(events: Events, kind: type, hand: int | None = None) -> int:
    """The index of the first event of `kind` (of `hand`, if given)."""
    return next(
        i
        for i, (_, e) in enumerate(events)
        if isinstance(e, kind) and (hand is None or e.hand == hand)
    )


def altered(events: Events, index: int, **changes: Any) -> Events:
    out = list(events)
    version, event = out[index]
    out[index] = (version, msgspec.structs.replace(event, **changes))
    return out


def fields(findings: list[DealFinding]) -> set[str]:
    return {f.field for f in findings}


@pytest.mark.parametrize(
    ("variant", "players", "options"),
    [
        ("hang-ten", 4, GameOptions(hands=2, turn_limit=5)),
        ("tens", 2, GameOptions(turn_limit=4)),
        ("golf", 3, GameOptions(hands=3, turn_limit=6)),
        ("basketball", 2, GameOptions()),
        ("tens-shedding", 3, GameOptions(turn_limit=60)),
    ],
)
def test_a_fair_game_of_every_variant_has_no_finding(
    variant: str, players: int, options: GameOptions
) -> None:
    seeds = {1: {0: "lobby seed"}, 2: {1: "🂡 second hand", 0: "changed"}, 4: {0: "x"}}
    events = play(variant, players, options, seeds=seeds)
    assert sum(isinstance(e, HandDealt) for _, e in events) >= 1
    assert check_deals(events) == []


def test_the_seeds_a_deal_uses_are_those_set_before_it_else_the_names() -> None:
    events = golf(seeds={2: {1: "mine"}})
    one = events[first(events, HandDealt, 1)][1]
    two = events[first(events, HandDealt, 2)][1]
    three = events[first(events, HandDealt, 3)][1]
    assert one.seat_seeds == ("player 0", "player 1", "player 2")
    assert two.seat_seeds == three.seat_seeds == ("player 0", "mine", "player 2")
    assert check_deals(events) == []


def test_a_deal_that_ignores_a_seat_seed_is_found() -> None:
    events = golf(seeds={2: {1: "mine"}})
    index = first(events, HandDealt, 2)
    bad = altered(events, index, seat_seeds=("player 0", "player 1", "player 2"))
    assert [(f.version, f.field) for f in check_deals(bad) if f.field == "seat_seeds"] == [
        (events[index][0], "seat_seeds")
    ]


def test_a_seed_set_after_the_deal_cannot_have_been_used() -> None:
    """Moving a seat's seed to just after the deal that claims to use it: the deal used a
    seed it could not have known."""
    events = golf(seeds={2: {1: "mine"}})
    at, deal = first(events, SeatSeedSet), first(events, HandDealt, 2)
    moved = [e for i, (_, e) in enumerate(events) if i != at]
    moved.insert(deal, events[at][1])  # now right after the deal (indices shifted by one)
    findings = check_deals(list(enumerate(moved, start=1)))
    assert "seat_seeds" in fields(findings)


def test_a_server_seed_off_the_chain_is_found() -> None:
    events = golf()
    index = first(events, HandDealt, 2)
    other = hashlib.sha256(b"chosen after seeing the seats").hexdigest()
    bad = altered(events, index, commitment=hashlib.sha256(bytes.fromhex(other)).hexdigest())
    bad = altered(bad, first(bad, HandEnded, 2), server_seed=other)
    assert {"commitment", "server_seed"} <= fields(check_deals(bad))


def test_a_revealed_seed_that_is_not_the_hmac_of_the_seeds_is_found() -> None:
    events = golf()
    index = first(events, HandEnded, 1)
    bad = altered(events, index, seed="00" * 32)
    assert "seed" in fields(check_deals(bad))


def test_a_wrong_or_missing_secret_at_the_end_of_the_game_is_found() -> None:
    events = play("tens", 2, GameOptions(turn_limit=4))
    wrong = altered(events, 0, seed_secret="11" * 32)
    found = check_deals(wrong)
    assert (1, "secret") in [(f.version, f.field) for f in found]
    assert all(isinstance(f, DealFinding) and f.message for f in found)
    missing = altered(events, 0, seed_secret="")
    assert [f.field for f in check_deals(missing)] == ["secret"]


def test_a_game_that_outlasts_its_chain_is_checked_across_the_extension() -> None:
    """With chains of one hand, every deal commits the next chain in the same write."""
    events = play("tens", 2, GameOptions(turn_limit=3), chain_hands=1, seeds={2: {0: "fresh"}})
    extensions = [e for _, e in events if isinstance(e, SeedChainExtended)]
    assert [e.first_hand for e in extensions[:1]] == [2]
    assert first(events, SeedChainExtended) == first(events, HandDealt, 1) + 1
    two = events[first(events, HandDealt, 2)][1]
    assert two.seat_seeds == ("fresh", "player 1")
    assert two.commitment == extensions[0].anchor
    assert check_deals(events) == []


def test_a_seed_set_before_an_extension_does_not_count_for_its_hands() -> None:
    events = play("tens", 2, GameOptions(turn_limit=3), chain_hands=1, seeds={1: {0: "old"}})
    assert events[first(events, HandDealt, 1)][1].seat_seeds == ("old", "player 1")
    index = first(events, HandDealt, 2)
    assert events[index][1].seat_seeds == ("player 0", "player 1")
    bad = altered(events, index, seat_seeds=("old", "player 1"))
    assert "seat_seeds" in fields(check_deals(bad))


def test_a_chain_committed_after_a_hand_it_covers_is_found() -> None:
    events = play("tens", 2, GameOptions(turn_limit=3), chain_hands=1)
    index = first(events, SeedChainExtended)
    bad = altered(events, index, first_hand=1)
    assert "first_hand" in fields(check_deals(bad))


def test_the_chain_is_committed_in_the_first_event_before_any_seat() -> None:
    events = golf()
    created = events[0][1]
    assert isinstance(created, GameCreated)
    assert created.seed_hands == 3
    swapped = [(1, events[1][1]), (2, created), *events[2:]]
    assert check_deals(swapped)  # a chain committed later is no commitment


def test_an_older_v1_game_still_verifies_and_its_tampering_is_found() -> None:
    events = golf()
    v1: Events = []
    for version, event in events:
        if isinstance(event, GameCreated):
            event = msgspec.structs.replace(event, seed_anchor="", seed_hands=0, seed_secret="")
        elif isinstance(event, HandDealt):
            seed = bytes.fromhex(event.seed)
            event = HandDealt(
                event.hand, event.dealer, event.seed, hashlib.sha256(seed).hexdigest()
            )
        elif isinstance(event, HandEnded):
            event = msgspec.structs.replace(event, server_seed="")
        v1.append((version, event))
    assert all(e.shuffle == SHUFFLE_V1 for _, e in v1 if isinstance(e, HandDealt))
    assert check_deals(v1) == []
    bad = altered(v1, first(v1, HandEnded, 2), seed="00" * 32)
    assert fields(check_deals(bad)) == {"seed"}


def test_a_viewer_s_copy_of_a_live_hand_is_checked_as_far_as_it_is_public() -> None:
    """The hand in play has its secrets blanked: its commitment and seat seeds still check."""
    events = golf()
    last_deal = first(events, HandDealt, 3)
    live = events[: last_deal + 1]
    live = altered(live, last_deal, seed="", server_seed="")
    live = altered(live, 0, seed_secret="")
    assert check_deals(live) == []
    assert "commitment" in fields(check_deals(altered(live, last_deal, commitment="00" * 32)))


# ---- hostile histories: the checker reports, it never fails --------------------------------

FIELD_VALUES = {
    int: st.integers(min_value=-(2**70), max_value=2**70),
    str: st.one_of(st.text(max_size=70), st.binary(min_size=32, max_size=32).map(bytes.hex)),
    tuple: st.lists(st.text(max_size=5), max_size=4).map(tuple),
}
GOLF_GAME = golf(seeds={2: {1: "mine"}})
TENS_GAME = play("tens", 2, GameOptions(turn_limit=3), chain_hands=1, seeds={2: {0: "x"}})
CHECKED = (GameCreated, SeatSeedSet, SeedChainExtended, HandDealt, HandEnded)


@st.composite
def tampered(draw: st.DrawFn) -> Events:
    events = list(draw(st.sampled_from([GOLF_GAME, TENS_GAME])))
    for _ in range(draw(st.integers(1, 4))):
        index = draw(
            st.sampled_from([i for i, (_, e) in enumerate(events) if isinstance(e, CHECKED)])
        )
        version, event = events[index]
        name = draw(st.sampled_from(event.__struct_fields__))
        value = getattr(event, name)
        kind = tuple if isinstance(value, tuple) else type(value)
        if kind not in FIELD_VALUES or (kind is tuple and value and not isinstance(value[0], str)):
            continue
        events[index] = (
            version,
            msgspec.structs.replace(event, **{name: draw(FIELD_VALUES[kind])}),
        )
    if draw(st.booleans()):
        events = draw(st.permutations(events))
    return events


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(events=tampered())
def test_any_tampered_history_gets_findings_not_an_exception(events: Events) -> None:
    findings = check_deals(events)
    assert all(isinstance(f, DealFinding) for f in findings)
    if events in (GOLF_GAME, TENS_GAME):
        assert findings == []


def test_a_chain_longer_than_the_service_draws_is_a_finding_not_a_long_wait() -> None:
    events = altered(GOLF_GAME, 0, seed_hands=10**12)
    assert "seed_hands" in fields(check_deals(events))


def test_a_chain_committed_before_the_last_one_is_used_up_is_a_finding_and_not_hashed() -> None:
    """Only the deal of a chain's last hand commits the next: a history holding many long
    chains early would otherwise cost the checker 100,000 hashes each."""
    extra = [SeedChainExtended(4 + 100_000 * i, 100_000, "00" * 32, "11" * 32) for i in range(50)]
    events = [e for _, e in GOLF_GAME]
    events[1:1] = extra
    findings = check_deals(list(enumerate(events, start=1)))
    assert {f.version for f in findings if f.field == "first_hand"} == set(range(2, 52))
