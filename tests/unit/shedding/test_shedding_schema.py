"""Tens-shedding schema: permanent tags, strict actions, events that round-trip."""

from __future__ import annotations

import msgspec
import pytest

from events.schema.shedding import (
    EVENTS,
    BlindCardTurned,
    CardsPlayed,
    ChooseStacks,
    EndPlay,
    PileBurned,
    PilePickedUp,
    PlayBlind,
    PlayCards,
    PlayPassed,
    SheddingAction,
    StacksChosen,
)

pytestmark = pytest.mark.unit

ACTIONS = msgspec.json.Decoder(SheddingAction)


def test_tags_are_permanent() -> None:
    kinds: tuple[type[msgspec.Struct], ...] = (*EVENTS, ChooseStacks, PlayCards, PlayBlind, EndPlay)
    tags = {cls: cls.__struct_config__.tag for cls in kinds}
    assert tags == {
        ChooseStacks: "choose-stacks",
        PlayCards: "play",
        PlayBlind: "play-blind",
        EndPlay: "end-play",
        StacksChosen: "stacks.chosen",
        CardsPlayed: "cards.played",
        BlindCardTurned: "blind.card.turned",
        PileBurned: "pile.burned",
        PilePickedUp: "pile.picked.up",
        PlayPassed: "play.passed",
    }


def test_actions_decode_by_tag() -> None:
    assert ACTIONS.decode(b'{"type":"play","hand":["5S"],"stacks":[0]}') == PlayCards(("5S",), (0,))
    assert ACTIONS.decode(b'{"type":"play-blind","stack":2}') == PlayBlind(2)
    assert ACTIONS.decode(b'{"type":"end-play"}') == EndPlay()
    assert ACTIONS.decode(b'{"type":"choose-stacks","cards":["2S","3S","4S","5S"]}') == (
        ChooseStacks(("2S", "3S", "4S", "5S"))
    )


@pytest.mark.parametrize(
    "body",
    [
        b'{"type":"play","hand":["5S"],"seat":1}',
        b'{"type":"play","hand":["XX"]}',
        b'{"type":"play-blind","stack":4}',
        b'{"type":"choose-stacks","cards":["2S","3S","4S"]}',
        b'{"type":"pass"}',
    ],
)
def test_malformed_actions_are_refused(body: bytes) -> None:
    with pytest.raises(msgspec.ValidationError):
        ACTIONS.decode(body)


def test_events_round_trip() -> None:
    events = (
        StacksChosen(0, ("2S", "3S", "4S", "5S")),
        CardsPlayed(1, ("5H",), (2,), ("5D",)),
        BlindCardTurned(1, 3, "QC"),
        PileBurned(1, ("TS",)),
        PilePickedUp(0, ("4H", "9C")),
        PlayPassed(0, 1),
    )
    decoder = msgspec.json.Decoder(
        StacksChosen | CardsPlayed | BlindCardTurned | PileBurned | PilePickedUp | PlayPassed
    )
    for event in events:
        assert decoder.decode(msgspec.json.encode(event)) == event
