"""The domain's fold beside the feed, for projections that need more than the events say.

Whose turn it is cannot be read off the events in every variant (Tens-shedding's order, the
turns owed after going out): only the decider knows, by folding. A projection that needs it
holds a `GameFolds` and has the runner await its `prepare(batch, feed)` before it calls
`apply` for that batch (the one hook the runner gives, projections/runner.py: a projection
without `prepare` is left alone). `prepare` folds each game event of the batch with the
decider that plays it (`domain.variants.start`, `Decider.evolve`, `Decider.status`) and
remembers, for each event, the play state just after it (its status is computed only when
asked: the scoreboard asks at the last event of each game in a batch, the replay never) and
how far the batch took each game; `apply` then reads those as more input, so it stays a pure
function of (event, docs, fold).

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
from events.schema.common import GameEnded, GameStarted, HandDealt
from events.schema.lobby import EVENTS as LOBBY_EVENTS
from events.store.base import RecordedEvent
from events.store.unreadable import Unreadable, UnreadableEvent
from projections.runner import VersionGap

ReadStream = Callable[[str, int, int], Awaitable[Sequence[RecordedEvent]]]
"""`(stream_id, from_version, limit)` -> the stream's events: `EventStore.read_stream`."""

GAME_PREFIX = "game:"


class FoldError(Exception):
    """A game's events could not be folded: the store lacks some, or no store was given."""


def game_id(event: RecordedEvent) -> str | None:
    """The game an event belongs to, or None for a stream that is not a game's."""
    stream = event.stream_id
    return stream[len(GAME_PREFIX) :] if stream.startswith(GAME_PREFIX) else None


_LOBBY_TYPES = frozenset(LOBBY_EVENTS)
GAME_WEIGHT = 20
"""What a game's own fold costs to keep, in events (its play state: about 4 KB, where a
kept event, decoded, takes about 200 B)."""


@dataclass(slots=True, eq=False)
class GameFold:
    """One game folded through `version`: its play state (`play`), and (`keep`) its events
    from `start` on, the hand in play and the last one ended (those before are let go)."""

    play: bool = True
    keep: bool = False
    version: int = 0
    start: int = 1
    """The version of `events[0]`."""
    events: list[tuple[int, Any]] = field(default_factory=list)
    decider: Decider | None = None
    state: Any = None
    finished: bool = False
    dealt: int = 0
    """Where in `events` the last `hand.dealt` is when it deals a hand after the first (what
    `let_go` keeps from); 0 when there is nothing before it to let go."""
    unreadable: bool = False
    """A row of the game could not be decoded (the store has reported it): from it on, the
    fold stays as it was before it."""

    def add(self, version: int, event: Any) -> None:
        # By exact type (events are never subclassed): this runs for every event of a fold.
        kind = type(event)
        self.version = version
        if kind is Unreadable or self.unreadable:
            self.unreadable = True
            return
        if self.keep:
            self.events.append((version, event))
            if kind is HandDealt:
                self.dealt = len(self.events) - 1 if event.hand > 1 else 0
        if kind is GameEnded:
            self.finished = True
        if not self.play:
            return
        if kind is GameStarted:
            self.decider, self.state = start(event)
        elif self.decider is not None and kind not in _LOBBY_TYPES:
            self.state = self.decider.evolve(self.state, event)

    def through(self, version: int) -> list[tuple[int, Any]]:
        return self.events[: version - self.start + 1]

    def let_go(self) -> int:
        """Forget the events before the last `hand.dealt` of a hand after the first (every
        earlier hand is over and written); how many were let go. Kept track of by `add`, so
        a game touched by every small batch of a following projector costs nothing here (a
        search back through the hand each time did, quadratically in the hand's length)."""
        at = self.dealt
        if at <= 0:
            return 0
        self.start = self.events[at][0]
        del self.events[:at]
        self.dealt = 0
        return at

    @property
    def weight(self) -> int:
        return len(self.events) + GAME_WEIGHT


class GameFolds:
    """The per-game fold cache of one projection in the projector process."""

    def __init__(
        self,
        read_stream: ReadStream | None = None,
        max_events: int = 100_000,
        play: bool = True,
        keep: bool = False,
        name: str = "",
    ) -> None:
        """`play`: fold the play state (the scoreboard's status); `keep`: keep the events
        of the hand in play (the replay's history). `max_events` bounds the cache's weight:
        kept events plus `GAME_WEIGHT` a game (100,000: about 20 MB). `name`: the
        projection's, for the error that stops it when a game's stream has a gap."""
        self.name = name
        self._read_stream = read_stream
        self._play = play
        self._keep = keep
        self._max_weight = max_events
        self._games: OrderedDict[str, GameFold] = OrderedDict()
        self._weight = 0
        self._after: dict[tuple[str, int], tuple[Decider | None, Any, GameFold]] = {}
        """(stream, version) -> the decider and play state just after that event, and its fold."""
        self._reached: dict[str, int] = {}
        """Each game of the batch prepared -> the version the batch took it to."""
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
            self._let_go()
            games, after, keep, reached = self._games, self._after, self._keep, self._reached
            for event in batch:
                stream_id, version = event.stream_id, event.version
                if not stream_id.startswith(GAME_PREFIX):
                    continue
                fold = games.get(stream_id)
                if fold is None or fold.version != version - 1:  # a miss: from the store
                    fold = await self._fold_before(stream_id, version)
                fold.add(version, event.data)
                self._weight += keep
                after[(stream_id, version)] = (fold.decider, fold.state, fold)
                reached[stream_id] = version
            for stream_id in reached:
                if stream_id in games:
                    games.move_to_end(stream_id)  # the least recently used go first
            self._evict()

    def status_after(self, event: RecordedEvent) -> Status | None:
        """The game's status just after `event` (None before `game.started`)."""
        decider, state, _ = self._folded(event)
        return None if decider is None else decider.status(state)

    def last_in_batch(self, event: RecordedEvent) -> bool:
        """Whether `event` is the last of its game in the batch prepared: a projection that
        rewrites one document per game at each event need write it only then (the batch is
        committed as one step, so only each key's last write is ever seen)."""
        reached = self._reached.get(event.stream_id, 0)
        if reached < event.version:
            raise FoldError(f"{event.stream_id} v{event.version} was not in the prepared batch")
        return reached == event.version

    def history(self, event: RecordedEvent) -> list[tuple[int, Any]]:
        """The game's kept events through `event`, as (version, event): from version 1, or
        from the `hand.dealt` of the hand the event belongs to when that is not the first."""
        return self._folded(event)[2].through(event.version)

    def kept(self, event: RecordedEvent) -> tuple[list[tuple[int, Any]], int]:
        """`history(event)` without its copy: the game's kept events, of which those
        through `event` are `[: end + 1]` (later ones follow it when the batch took the game
        further). Read them before the next `prepare`, which may let the earlier ones go."""
        fold = self._folded(event)[2]
        return fold.events, event.version - fold.start

    def _folded(self, event: RecordedEvent) -> tuple[Decider | None, Any, GameFold]:
        try:
            return self._after[(event.stream_id, event.version)]
        except KeyError:
            raise FoldError(
                f"{event.stream_id} v{event.version} was not in the prepared batch"
            ) from None

    def _let_go(self) -> None:
        """Between batches (the last one's `apply` is done): forget the events no hand
        needs any more, of the games the last batch touched."""
        after, games = self._after, self._games
        for stream_id, version in self._reached.items():  # each game's fold at its last event
            fold = after[(stream_id, version)][2]
            if games.get(stream_id) is fold:
                self._weight -= fold.let_go()
        after.clear()
        self._reached.clear()

    async def _fold_before(self, stream_id: str, version: int) -> GameFold:
        """The game's fold through `version - 1`: from the cache when it is there, else
        (a miss, or a batch read again behind the cache) from the event store."""
        fold = self._games.get(stream_id)
        if fold is not None and fold.version == version - 1:
            return fold
        if fold is not None:
            self._weight -= fold.weight
        fold = await self._load(stream_id, version - 1)
        fold.let_go()
        self._weight += fold.weight
        self._games[stream_id] = fold
        return fold

    async def _load(self, stream_id: str, through: int) -> GameFold:
        fold = GameFold(play=self._play, keep=self._keep)
        if through == 0:
            return fold
        if self._read_stream is None:
            raise FoldError(f"{stream_id}: versions 1..{through} are not folded and no store")
        try:
            stored = await self._read_stream(stream_id, 1, through)
        except UnreadableEvent:  # (reported by the store) the game is not folded past it
            return GameFold(play=self._play, keep=self._keep, version=through, unreadable=True)
        for expected, event in enumerate(stored, 1):  # a version missing inside: a gap (its
            # count alone took the next version for the missing one, and folded it twice)
            if event.version != expected:
                raise VersionGap(self.name, stream_id, expected - 1, event.version)
        if len(stored) != through:  # the feed has moved past versions the stream lacks
            raise VersionGap(self.name, stream_id, len(stored), through + 1)
        self.refolds += 1
        for event in stored:
            fold.add(event.version, event.data)
        return fold

    def _evict(self) -> None:
        """Finished games first (no event follows `game.ended`), then the least recently
        used, until the cache weighs at most its bound. Games of the batch just prepared
        stay answerable: their entries in `_after` hold them."""
        for stream_id in [s for s, f in self._games.items() if f.finished]:
            self._weight -= self._games.pop(stream_id).weight
        while self._weight > self._max_weight and len(self._games) > 1:
            _, fold = self._games.popitem(last=False)
            self._weight -= fold.weight

    @property
    def cached_games(self) -> int:
        return len(self._games)
