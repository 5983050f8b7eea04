"""Feeds of whole games for read-model tests: lobbies, bot-played games, interleaved.

Each game is a stream `game:<id>`: `game.created`, seat claims (a few released and claimed
again, names drawn from a small pool so players meet in several games), then the events of a
game the simulator played (domain/simulate.py). Some games never start, some stop part-way
(a hand in play when the feed ends); the streams are interleaved the way concurrent games
reach the global feed.
"""

from __future__ import annotations

import random
import uuid
from datetime import UTC, datetime
from typing import Any

from domain.simulate import play_game
from domain.variants import DECIDERS, bot
from events.schema.common import GameOptions
from events.schema.lobby import (
    GameCreated,
    SeatClaimed,
    SeatReleased,
    SeatSeedSet,
    SeedChainExtended,
)
from events.store.base import RecordedEvent

NAMES = ("Ada", "Bo", "Cyd", "Dee", "Eli", "Fay", "Gus")
"""No name looks like a card, so a card-shaped text in a document is a card."""

_OPTIONS = {
    "hang-ten": GameOptions(hands=2, turn_limit=8),
    "tens": GameOptions(hands=2, turn_limit=10),
    "golf": GameOptions(hands=3),
    "basketball": GameOptions(hands=2),
    "tens-shedding": GameOptions(turn_limit=150),
}


def game_events(rng: random.Random, variant: str, game: int) -> list[Any]:
    """One game's stream, from `game.created`: whole, cut short, or a lobby only."""
    decider = DECIDERS[variant]
    players = rng.randint(decider.min_players, min(decider.max_players, decider.min_players + 2))
    options = _OPTIONS[variant]
    events: list[Any] = [
        GameCreated(
            variant,
            players,
            options,
            "0" * 64,
            f"game {game}",
            rng.randbytes(32).hex(),
            4,
            rng.randbytes(32).hex(),
        )
    ]
    for seat in range(players):
        events.append(SeatClaimed(seat, rng.choice(NAMES), "1" * 64))
        if rng.random() < 0.2:
            events.append(SeatReleased(seat))
            events.append(SeatClaimed(seat, rng.choice(NAMES), "2" * 64))
        if rng.random() < 0.3:
            events.append(SeatSeedSet(seat, rng.randbytes(32).hex()))
    shape = rng.random()
    if shape < 0.1:
        return events[: rng.randint(1, len(events))]  # a lobby that never started
    bots = [bot(rng.choice(("random", "greedy")), variant) for _ in range(players)]
    played = play_game(decider, players, bots, rng.randbytes(32), rng, options)
    play = list(played.events)
    for _ in range(rng.randint(0, 2)):  # the lobby goes on during play: seeds, chains
        at = rng.randint(1, len(play))
        extra = (
            SeatSeedSet(rng.randrange(players), rng.randbytes(32).hex())
            if rng.random() < 0.5
            else SeedChainExtended(5, 4, rng.randbytes(32).hex(), rng.randbytes(32).hex())
        )
        play.insert(at, extra)
    events.extend(play)
    if shape < 0.3:
        return events[: rng.randint(len(events) - len(play), len(events))]
    return events


def interleave(rng: random.Random, streams: dict[str, list[Any]]) -> list[RecordedEvent]:
    """The streams merged in a random order that keeps each stream's own order."""
    cursors = dict.fromkeys(streams, 0)
    feed: list[RecordedEvent] = []
    live = [s for s in streams if streams[s]]
    while live:
        stream_id = rng.choice(live)
        events = streams[stream_id]
        start = cursors[stream_id]
        stop = min(len(events), start + rng.randint(1, 4))  # an append of a few events
        for offset in range(start, stop):
            feed.append(record(stream_id, offset + 1, len(feed) + 1, events[offset]))
        cursors[stream_id] = stop
        if stop == len(events):
            live.remove(stream_id)
    return feed


def record(stream_id: str, version: int, position: int, data: Any) -> RecordedEvent:
    return RecordedEvent(
        global_position=position,
        tx_id=position,
        stream_id=stream_id,
        version=version,
        event_id=uuid.uuid4(),
        type=type(data).__struct_config__.tag,  # type: ignore[attr-defined]
        schema_version=1,
        data=data,
        metadata={},
        recorded_at=datetime(2026, 1, 1, tzinfo=UTC),
        hash=b"",
    )


def random_feed(
    seed: int, games: int, variants: tuple[str, ...] = tuple(DECIDERS)
) -> list[RecordedEvent]:
    rng = random.Random(seed)
    streams = {
        f"game:{rng.getrandbits(64):016x}": game_events(rng, variants[i % len(variants)], i)
        for i in range(games)
    }
    return interleave(rng, streams)


def streams_of(feed: list[RecordedEvent]) -> dict[str, list[RecordedEvent]]:
    out: dict[str, list[RecordedEvent]] = {}
    for event in feed:
        out.setdefault(event.stream_id, []).append(event)
    return out
