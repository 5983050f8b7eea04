"""The referee: it plays a seat's turn when the seat's clock runs out, and plays out the
seats whose players resigned or withdrew, so that every table finishes.

One per deployment (service/ops/leader.py), or a process of its own: `fairway referee`. It
follows the store's global feed (service/ops/follower.py) and folds the games that concern it: those
with a turn clock from their first event, and a game without one from the moment a seat
resigns (then read once from the store). For each it knows who must act and since which
event (service/play/turns.py), whose `recorded_at` starts the clock. It wakes at the earliest
deadline, or at the next append, whichever comes first, and asks `GameService.play_for`.

Correctness never rests on the referee: `play_for` appends at the version the referee saw
and only if the seat is due then, so a referee that lags, a second referee on another
instance, or a seat that acted at the last moment makes the attempt a no-op. Several
referees on one database each try a timeout; the store keeps one.

On start it reads the feed from its beginning, so a game whose clock was running when the
service stopped is not forgotten; it plays nothing until it has caught up with the feed's
head (the cost of that scan: docs/BENCHMARKS.md, "The referee's start").
"""

from __future__ import annotations

import heapq
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any

from domain import clock
from domain.decider import Decider
from domain.errors import RuleViolation
from domain.variants import start
from events.feed import Feed
from events.schema import lobby
from events.schema.common import GameStarted
from events.schema.lobby import GameCreated, SeatResigned
from events.store import RecordedEvent, UnreadableEvent
from service.contract.problems import ApiError
from service.ops.follower import Follower, folded, game_events
from service.ops.logging import log
from service.play.games import GameService
from service.play.record import GameRecord
from service.play.turns import TurnStarts, deadline

TICK = 1.0
"""Seconds the referee waits at most before it looks at the clock again."""
LOBBY = tuple(lobby.EVENTS)


def utc_now() -> datetime:
    return datetime.now(UTC)


@dataclass(slots=True, eq=False)
class Table:
    """A live game as the referee folds it from the feed."""

    turn_seconds: int | None
    version: int = 0
    decider: Decider | None = None
    state: Any = None
    resigned: dict[int, str] = field(default_factory=dict)
    turns: TurnStarts = field(default_factory=TurnStarts)
    began: dict[int, datetime] = field(default_factory=dict)
    """The recorded time of each event that began a current turn, by version."""
    tried: int = 0
    """The version at which the referee last asked to play: never twice at one version."""
    over: bool = False

    @classmethod
    def adopted(cls, record: GameRecord, at: datetime) -> Table:
        """A game without a clock, from its record, once a seat has resigned at `at`."""
        table = cls(record.lobby.options.turn_seconds, record.version)
        table.decider, table.state = record.decider, record.state
        table.resigned = {
            seat: reason for seat, reason in enumerate(record.lobby.resigned) if reason
        }
        table._moved(record.version, at)
        return table

    def fold(self, event: RecordedEvent) -> None:
        data = event.data
        if isinstance(data, GameStarted):
            self.decider, self.state = start(data)
        elif isinstance(data, SeatResigned):
            self.resigned[data.seat] = data.reason
        elif not isinstance(data, LOBBY) and self.decider is not None:
            self.state = self.decider.evolve(self.state, data)
        self.version = event.version
        self._moved(event.version, event.recorded_at)

    def _moved(self, version: int, at: datetime) -> None:
        if self.decider is None:
            return
        status = self.decider.status(self.state)
        self.over = status.phase == "game_over"
        self.turns.advance(status, version)
        current = set(self.turns.since.values())
        if version in current:
            self.began[version] = at
        for old in [v for v in self.began if v not in current]:
            del self.began[old]

    def due(self, now: datetime) -> tuple[int, str, datetime] | None:
        """A seat to play for now (seat, reason, when its turn began), if any: a resigned
        seat at once, a seat whose clock ran out."""
        for seat, version in sorted(self.turns.since.items()):
            began = self.began.get(version, now)
            reason = self.resigned.get(seat)
            if reason is not None:
                return seat, reason, began
            if clock.due(self.turn_seconds, began, now):
                return seat, "timeout", began
        return None

    def next_deadline(self) -> datetime | None:
        if self.turn_seconds is None or self.tried == self.version:
            return None
        times = [
            deadline(self.turn_seconds, self.began[v])
            for seat, v in self.turns.since.items()
            if seat not in self.resigned and v in self.began
        ]
        return min(times, default=None)


class Referee:
    def __init__(
        self,
        feed: Feed,
        games: GameService,
        now: Callable[[], datetime] = utc_now,
        tick: float = TICK,
    ) -> None:
        self.games = games
        self.now = now
        self.tick = tick
        self.tables: dict[str, Table] = {}
        self._moved: set[str] = set()
        """Games folded since the last look: what is due there may have changed."""
        self._timers: list[tuple[datetime, str]] = []
        """A heap of (deadline, game): when to look at a game again. An entry may be stale
        (the game moved since); looking at a game that is not due costs little."""
        self.follower = Follower("referee", feed, self)
        self.caught_up = self.follower.caught_up
        """Set once the referee has read the feed up to its head (the start-up scan)."""

    def start(self) -> None:
        self.follower.start()

    async def stop(self) -> None:
        await self.follower.stop()

    async def act(self) -> float:
        """Caught up with the feed: play what is due, then wait for the next append or the
        next deadline."""
        await self.play_due()
        return self._wait()

    async def fold(self, page: list[RecordedEvent]) -> None:
        for game_id, event in game_events(page, self.tables):
            table = self.tables.get(game_id)
            if table is None:
                data = event.data
                if isinstance(data, GameCreated) and data.options.turn_seconds is not None:
                    self.tables[game_id] = Table(data.options.turn_seconds, event.version)
                elif isinstance(data, SeatResigned):
                    await self._adopt(game_id, event.recorded_at)
                continue
            # (an event at or below its version: adopted from a record that had it already)
            if not folded("referee", self.tables, game_id, event):
                continue
            self._moved.add(game_id)
            if table.over:
                del self.tables[game_id]

    async def _adopt(self, game_id: str, at: datetime) -> None:
        try:
            record = await self.games.load(game_id)
        except (ApiError, UnreadableEvent) as refused:  # a history it cannot read: not played
            log.error("referee_cannot_load", game_id=game_id, error=str(refused))
            return
        if record.started and not record.finished:
            self.tables[game_id] = Table.adopted(record, at)
            self._moved.add(game_id)

    async def play_due(self) -> int:
        """Ask to play each due seat (one per game: its append moves the game, and the
        feed brings the rest); returns how many turns were played. Looks only at the games
        that moved and those whose deadline has come, so a thousand quiet clocked games
        cost nothing per append."""
        now = self.now()
        looks, self._moved = self._moved, set()
        while self._timers and self._timers[0][0] <= now:
            looks.add(heapq.heappop(self._timers)[1])
        played = 0
        for game_id in looks:
            table = self.tables.get(game_id)
            if table is None or table.tried == table.version:
                continue
            found = table.due(now)
            if found is None:
                if (next_one := table.next_deadline()) is not None:
                    heapq.heappush(self._timers, (next_one, game_id))
                continue
            seat, reason, began = found
            try:
                outcome = await self.games.play_for(
                    game_id, seat, reason, table.version, began, now
                )
            except (ApiError, RuleViolation, UnreadableEvent) as refused:
                log.error("referee_cannot_play", game_id=game_id, seat=seat, error=str(refused))
                outcome = None
            except BaseException:  # the store failed: look again after the pause
                self._moved.update(looks)
                raise
            table.tried = table.version
            played += outcome is not None
        return played

    def _wait(self) -> float:
        """Seconds until the earliest deadline, at most a tick."""
        if self._moved:
            return 0.0
        if not self._timers:
            return self.tick
        soonest = self._timers[0][0]
        return min(self.tick, max(0.01, (soonest - self.now()).total_seconds()))
