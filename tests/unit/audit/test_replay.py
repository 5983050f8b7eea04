"""Replay equals live play: for random games of every variant, each step of every hand's
replay shows exactly the table the live fold held after that event, every event from the
first deal on is a step of its hand's replay (the lobby's made mid-hand too: no gap in the
versions), and a hand not over or not dealt is refused whole."""

from __future__ import annotations

import random
from typing import Any

import pytest

from domain.variants import decider_for
from events.schema.common import HandDealt
from events.schema.lobby import SeatResigned, SeatSeedSet, SeedChainExtended, TurnPlayedFor
from service.contract.public import to_public
from service.read.replay import ReplayRefused, replay_hand
from tests.support.histories import played

pytestmark = pytest.mark.unit

GAMES = [
    ("hang-ten", 4),
    ("hang-ten", 6),
    ("tens", 3),
    ("golf", 2),
    ("golf", 5),
    ("basketball", 3),
    ("tens-shedding", 2),
    ("tens-shedding", 4),
]


@pytest.mark.parametrize(("variant", "players"), GAMES)
@pytest.mark.parametrize("seed", [1, 2])
def test_each_replay_step_is_the_table_folded_live(variant: str, players: int, seed: int) -> None:
    stored, live = played(variant, players, seed=seed)
    decider = decider_for(variant)
    events = [(version, event) for version, (event, _) in enumerate(stored, start=1)]
    hands = [event.hand for _, event in events if isinstance(event, HandDealt)]
    assert hands, "the game dealt hands"
    steps = 0
    for hand in hands:
        replay = replay_hand("0123456789abcdef", events, hand)
        assert (replay.game_id, replay.hand, replay.variant) == ("0123456789abcdef", hand, variant)
        assert isinstance(replay.steps[0].event, type(to_public(HandDealt(1, 0, "", ""))))
        for step in replay.steps:
            event = stored[step.version - 1][0]
            assert step.event == to_public(event)
            assert step.table == decider.table(live[step.version - 1])
        steps += len(replay.steps)
    first_deal = next(v for v, e in events if isinstance(e, HandDealt))
    assert steps == len(events) - first_deal + 1, "every event of play is in its hand's replay"


def with_lobby_mid_hand(events: list[tuple[int, Any]], rng: random.Random) -> list[tuple[int, Any]]:
    """`events` with lobby events made during hands (a seat's seed, a seed chain extended, a
    resignation, a turn played for a seat) inserted between events of play, renumbered."""
    played_at = [
        i for i, (_, e) in enumerate(events) if type(e).__module__.endswith(("grid", "shedding"))
    ]
    made = [
        SeatSeedSet(0, "a seed set mid-hand"),
        SeedChainExtended(9, 8, "ab" * 32, "cd" * 32),
        SeatResigned(1, "resigned"),
        TurnPlayedFor(1, "resigned"),
    ]
    out = [event for _, event in events]
    for at, event in sorted(zip(rng.sample(played_at, len(made)), made, strict=True))[::-1]:
        out.insert(at, event)
    return list(enumerate(out, start=1))


@pytest.mark.parametrize(("variant", "players"), [("golf", 3), ("tens-shedding", 3)])
def test_the_lobby_events_of_a_hand_are_steps_and_its_versions_have_no_gap(
    variant: str, players: int
) -> None:
    stored, _ = played(variant, players, seed=7)
    events = with_lobby_mid_hand(
        [(version, event) for version, (event, _) in enumerate(stored, start=1)], random.Random(7)
    )
    deals = {e.hand: v for v, e in events if isinstance(e, HandDealt)}
    shown = []
    for hand, dealt in deals.items():
        steps = replay_hand("g", events, hand).steps
        following = deals.get(hand + 1, len(events) + 1)
        assert [step.version for step in steps] == list(range(dealt, following)), hand
        shown += [step.event for step in steps]
    kinds = [type(event).__name__ for event in shown]
    for made in ("SeatSeedSet", "SeedChainExtended", "SeatResigned", "TurnPlayedFor"):
        assert kinds.count(made) == 1, made
    extended = next(e for e in shown if type(e).__name__ == "SeedChainExtended")
    assert extended.secret is None, "a seed chain's secret is shown once the game is over"
    assert extended.anchor == "ab" * 32
    seed = next(e for e in shown if type(e).__name__ == "SeatSeedSet")
    assert seed.seed == "a seed set mid-hand", "a seat's seed is public"


def test_replay_shows_every_card_of_a_finished_hand() -> None:
    stored, _ = played("golf", 3, seed=5)
    events = [(version, event) for version, (event, _) in enumerate(stored, start=1)]
    first = replay_hand("g", events, 1).steps[0].table
    assert all(card is not None for layout in first.layouts for row in layout for card in row)
    assert len(first.stock) > 0
    assert first.seed is not None


def test_a_hand_in_play_is_refused_whole_and_an_unknown_hand_is_not_found() -> None:
    stored, _ = played("hang-ten", 4, seed=3)
    events = [(version, event) for version, (event, _) in enumerate(stored, start=1)]
    ended = next(v for v, e in events if type(e).__name__ == "HandEnded")
    with pytest.raises(ReplayRefused) as in_play:
        replay_hand("g", events[: ended - 1], 1)
    assert in_play.value.code == "hand_in_play"
    with pytest.raises(ReplayRefused) as missing:
        replay_hand("g", events, 11)
    assert missing.value.code == "hand_not_found"
    with pytest.raises(ReplayRefused) as before_start:
        replay_hand("g", events[:3], 1)
    assert before_start.value.code == "hand_not_found"
