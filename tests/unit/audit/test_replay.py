"""Replay equals live play: for random games of every variant, each step of every hand's
replay shows exactly the table the live fold held after that event, and a hand not over or
not dealt is refused whole."""

from __future__ import annotations

import pytest

from domain.variants import decider_for
from events.schema import lobby
from events.schema.common import GameStarted, HandDealt
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
    started = next(v for v, e in events if isinstance(e, GameStarted))
    played_events = [e for v, e in events if v > started and not isinstance(e, lobby.EVENTS)]
    assert steps == len(played_events), "every event of play is in the replay of its hand"


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
