"""Whole game streams as the service stores them, played by bots, and appended interleaved.

A stream is `game.created`, the seat claims (now and then one released and claimed again),
then `game.started` and the play to the end, or cut short so that some games are still in
their lobby or in play. The projection tests and benchmarks feed these to a real store.
"""

from __future__ import annotations

import random
import uuid
from collections.abc import Sequence
from typing import Any

from domain.simulate import play_game
from domain.variants import DECIDERS, bot
from events.schema.common import GameOptions, GameStarted
from events.schema.lobby import GameCreated, SeatClaimed, SeatReleased
from events.store import EventStore, NewEvent

VARIANTS: tuple[tuple[str, GameOptions, tuple[int, ...]], ...] = (
    ("golf", GameOptions(hands=2), (2, 3, 4)),
    ("hang-ten", GameOptions(hands=1), (4, 5)),
    ("tens", GameOptions(hands=1), (2, 3)),
    ("basketball", GameOptions(), (2, 3)),
    ("tens-shedding", GameOptions(), (2, 3)),
)
NAMES = ("Ada", "Brian", "Chen", "Dora", "Eve", "Femi", "Grace", "Hugo", "Ines", "Jun")


def game_stream(rng: random.Random) -> tuple[str, list[Any]]:
    """One game's stream id and events."""
    variant, options, sizes = rng.choice(VARIANTS)
    players = rng.choice(sizes)
    game = uuid.UUID(int=rng.getrandbits(128)).hex[:16]
    title = rng.choice(("", "Friday", "Club night", "Practice"))
    events: list[Any] = [GameCreated(variant, players, options, "c" * 64, title)]
    for seat in range(players):
        events.append(SeatClaimed(seat, rng.choice(NAMES), f"{seat:x}" * 64))
        if rng.random() < 0.1:
            events.append(SeatReleased(seat))
            events.append(SeatClaimed(seat, rng.choice(NAMES), "e" * 64))
    decider = DECIDERS[variant]
    bots = [bot(rng.choice(("random", "greedy")), variant) for _ in range(players)]
    played = play_game(decider, players, bots, rng.randbytes(32), rng, options)
    events += played.events
    cut = rng.random()
    if cut < 0.15:  # still in its lobby
        events = events[: rng.randrange(1, players + 2)]
    elif cut < 0.4:  # in play
        events = events[: rng.randrange(players + 2, len(events))]
    return f"game:{game}", events


def game_streams(count: int, seed: int = 0) -> list[tuple[str, list[Any]]]:
    rng = random.Random(seed)
    return [game_stream(rng) for _ in range(count)]


async def append_interleaved(
    store: EventStore,
    games: Sequence[tuple[str, list[Any]]],
    seed: int = 0,
    most: int = 24,
    most_in_lobby: int | None = None,
) -> int:
    """Append every game's events, a few at a time, games taking turns at random (as
    concurrent games do); the number of events appended. `most_in_lobby`: at most this many
    an append before the game starts (players arriving one by one), `most` after."""
    rng = random.Random(seed)
    pending = {stream: list(events) for stream, events in games}
    versions = dict.fromkeys(pending, 0)
    total = 0
    while pending:
        stream = rng.choice(list(pending))
        events = pending[stream]
        limit = most
        if most_in_lobby is not None and not isinstance(events[0], GameStarted):
            limit = most_in_lobby
        take = events[: rng.randint(1, limit)]
        del events[: len(take)]
        batch = [NewEvent(uuid.uuid4(), event, {}) for event in take]
        await store.append(stream, versions[stream], batch)
        versions[stream] += len(batch)
        total += len(batch)
        if not events:
            del pending[stream]
    return total
