"""The domain's fold beside the feed, for projections that need more than the events say.

Whose turn it is cannot be read off the events in every variant (Tens-shedding's order, the
turns owed after going out): only the decider knows, by folding. A projection that needs it
holds a `GameFolds` and has the runner await its `prepare(batch, feed)` before it calls
`apply` for that batch (the one hook the runner gives, projections/runner.py: a projection
without `prepare` is left alone). `prepare` folds each game event of the batch with the
decider that plays it (`domain.variants.start`, `Decider.evolve`, `Decider.status`) and
remembers, for each event, the status just after it; `apply` then reads that as one more
input, so it stays a pure function of (event, docs, fold).

The fold of each game is kept in this process (a cache bounded in events, least recently
used out first) and refolded from the event store on a miss: after a restart, an eviction,
or a batch that starts again behind the cache (two projectors, a retried batch). Folding
costs about 3 µs an event (benchmarks/readmodels_bench.py).
"""

from __future__ import annotations

import asyncio
from collections import OrderedDict
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

from domain.decider import Decider, Status
from domain.variants import start
from events.schema.common import GameEnded, GameStarted
from events.schema.lobby import EVENTS as LOBBY_EVENTS
from events.store.base import RecordedEvent

ReadStream = Callable[[str, int, int], Awaitable[Sequence[RecordedEvent]]]
"""`(stream_id, from_version, limit)` -> the stream's events: `EventStore.read_stream`."""

GAME_PREFIX = "game:"


class FoldError(Exception):
    """A game's events could not be folded: the store lacks some, or no store was given."""


def game_id(event: RecordedEvent) -> str | None:
    """The game an event belongs to, or None for a stream that is not a game's."""
    stream = event.stream_id
    return stream[len(GAME_PREFIX) :] if stream.startswith(GAME_PREFIX) else None


@dataclass(slots=True)
class GameFold:
    """One game folded: its events so far, in version order from 1, and the play state."""

    events: list[tuple[int, Any]] = field(default_factory=list)
    play: bool = True
    """Whether to fold the play state; a projection that needs only the events says no."""
    decider: Decider | None = None
    state: Any = None
    finished: bool = False

    @property
    def version(self) -> int:
        return len(self.events)

    def add(self, version: int, event: Any) -> None:
        self.events.append((version, event))
        if isinstance(event, GameEnded):
            self.finished = True
        if not self.play:
            return
        if isinstance(event, GameStarted):
            self.decider, self.state = start(event)
        elif self.decider is not None and not isinstance(event, LOBBY_EVENTS):
            self.state = self.decider.evolve(self.state, event)

    def status(self) -> Status | None:
        return None if self.decider is None else self.decider.status(self.state)

    @classmethod
    def of(cls, events: Sequence[tuple[int, Any]], play: bool = True) -> GameFold:
        fold = cls(play=play)
        for version, event in events:
            fold.add(version, event)
        return fold


class GameFolds:
    """The per-game fold cache of one projection in the projector process."""

    def __init__(
        self, read_stream: ReadStream | None = None, max_events: int = 200_000, play: bool = True
    ) -> None:
        """`play=False`: keep each game's events only, without folding the play state (the
        replay projection needs no status)."""
        self._read_stream = read_stream
        self._play = play
        self._max_events = max_events
        self._games: OrderedDict[str, GameFold] = OrderedDict()
        self._events = 0
        self._after: dict[tuple[str, int], tuple[Status | None, GameFold]] = {}
        self._lock = asyncio.Lock()
        self.refolds = 0
        """How many folds came from the event store (misses), for metrics and tests."""

    async def prepare(
        self, batch: Sequence[RecordedEvent], read_stream: ReadStream | None = None
    ) -> None:
        """Fold every game event of `batch`; afterwards `status_after` and `history` answer
        for each of them (until the next `prepare`). A game not in the cache is read from
        `read_stream` (default: the one given at construction). Two runners sharing this
        cache take turns: one batch is prepared at a time, and each folds its batch as soon
        as its `prepare` returns, with nothing awaited in between."""
        async with self._lock:
            if read_stream is not None:
                self._read_stream = read_stream
            self._after.clear()
            for event in batch:
                if game_id(event) is None:
                    continue
                fold = await self._fold_before(event.stream_id, event.version)
                fold.add(event.version, event.data)
                self._events += 1
                self._after[(event.stream_id, event.version)] = (fold.status(), fold)
            self._evict()

    def status_after(self, event: RecordedEvent) -> Status | None:
        """The game's status just after `event` (None before `game.started`)."""
        return self._folded(event)[0]

    def history(self, event: RecordedEvent) -> list[tuple[int, Any]]:
        """The game's events from version 1 through `event`, as (version, event)."""
        return self._folded(event)[1].events[: event.version]

    def _folded(self, event: RecordedEvent) -> tuple[Status | None, GameFold]:
        try:
            return self._after[(event.stream_id, event.version)]
        except KeyError:
            raise FoldError(
                f"{event.stream_id} v{event.version} was not in the prepared batch"
            ) from None

    async def _fold_before(self, stream_id: str, version: int) -> GameFold:
        """The game's fold through `version - 1`, from the cache when it is there."""
        fold = self._games.get(stream_id)
        if fold is not None and fold.version == version - 1:
            self._games.move_to_end(stream_id)
            return fold
        if fold is not None and fold.version >= version:  # a batch read again: rewind
            self._events -= fold.version - (version - 1)
            fold = GameFold.of(fold.events[: version - 1], self._play)
        else:
            if fold is not None:
                self._events -= fold.version
            fold = await self._load(stream_id, version - 1)
            self._events += fold.version
        self._games[stream_id] = fold
        self._games.move_to_end(stream_id)
        return fold

    async def _load(self, stream_id: str, through: int) -> GameFold:
        if through == 0:
            return GameFold(play=self._play)
        if self._read_stream is None:
            raise FoldError(f"{stream_id}: versions 1..{through} are not folded and no store")
        stored = await self._read_stream(stream_id, 1, through)
        if len(stored) != through:
            raise FoldError(f"{stream_id}: the store has {len(stored)} of versions 1..{through}")
        self.refolds += 1
        return GameFold.of([(e.version, e.data) for e in stored], self._play)

    def _evict(self) -> None:
        """Finished games first (no event follows `game.ended`), then the least recently
        used, until the cache holds at most `max_events` events. Games of the batch just
        prepared stay: their entries in `_after` hold them anyway."""
        for stream_id in [s for s, f in self._games.items() if f.finished]:
            self._events -= self._games.pop(stream_id).version
        while self._events > self._max_events and len(self._games) > 1:
            _, fold = self._games.popitem(last=False)
            self._events -= fold.version

    @property
    def cached_games(self) -> int:
        return len(self._games)
