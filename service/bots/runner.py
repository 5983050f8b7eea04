"""The bot runner: it plays the seats bots hold, in every game that has one.

One per deployment (`fairway serve` with FAIRWAY_BOTS on, in the process that holds the
lead: service/ops/leader.py), or a process of its own: `fairway bots`. It follows the store's
global feed (service/ops/follower.py) and folds the games from the first `seat.claimed`
that names a bot: their bot seats, and once started the play state, to know who is to act.
When a bot seat is to act it waits the think time (FAIRWAY_BOT_THINK, so a spectator can
follow the table) and runs the seat's move (service/bots/moves.py) at the version it saw,
at most FAIRWAY_BOT_CONCURRENCY moves in flight at once; one move per game at a time, the
lowest bot seat first when several are to act at once (a setup step).

Correctness never rests on the runner: the move is decided again on the game's record caught
up with the store, and appended only at the version the runner saw. A runner that lags, a
second one on another instance, or a person who acted first makes the attempt a no-op. On
start it reads the feed from its beginning, so a game whose bots were to act while no runner
ran is played on; it plays nothing until it has caught up with the feed's head.
"""

from __future__ import annotations

import asyncio
import contextlib
from dataclasses import dataclass, field
from typing import Any

from domain.decider import Decider
from domain.errors import RuleViolation
from domain.variants import start
from events.feed import Feed
from events.schema import lobby
from events.schema.common import GameStarted
from events.schema.lobby import SeatClaimed, SeatReleased
from events.store import RecordedEvent, StoreError, UnreadableEvent
from service.bots.moves import THINKING, bot_move
from service.commands.command import NothingToDo
from service.commands.handler import Conflict, StaleVersion
from service.contract.problems import ApiError
from service.ops.follower import Follower, folded, game_events
from service.ops.logging import log
from service.play.games import GameService

TICK = 1.0
"""Seconds the runner waits at most for the feed before it looks again."""
LOBBY = tuple(lobby.EVENTS)


@dataclass(slots=True, eq=False)
class BotTable:
    """A game with bot seats as the runner folds it from the feed."""

    bots: dict[int, str] = field(default_factory=dict)
    """Each bot seat's level."""
    version: int = 0
    decider: Decider | None = None
    state: Any = None
    tried: int = 0
    """The version at which the runner last asked a bot to move: never twice at one."""
    over: bool = False

    def fold(self, event: RecordedEvent) -> None:
        data = event.data
        if isinstance(data, SeatClaimed | SeatReleased):
            level = data.bot if isinstance(data, SeatClaimed) else ""
            if level:
                self.bots[data.seat] = level
            else:
                self.bots.pop(data.seat, None)
        elif isinstance(data, GameStarted):
            self.decider, self.state = start(data)
        elif not isinstance(data, LOBBY) and self.decider is not None:
            self.state = self.decider.evolve(self.state, data)
            self.over = self.decider.status(self.state).phase == "game_over"
        self.version = event.version

    def due(self) -> tuple[int, str] | None:
        """The bot seat to move now (seat, level), if any: the lowest one to act."""
        if self.decider is None or self.over or self.tried == self.version:
            return None
        to_act = self.decider.status(self.state).to_act
        return next(((s, self.bots[s]) for s in sorted(to_act) if s in self.bots), None)


class BotRunner:
    def __init__(
        self,
        feed: Feed,
        games: GameService,
        think: float = 0.8,
        concurrency: int = 8,
        tick: float = TICK,
    ) -> None:
        self.games = games
        self.think = think
        self.tick = tick
        self.tables: dict[str, BotTable] = {}
        self.played = 0
        """Bot moves whose append returned here: this runner's, or the very same events
        another instance stored first (the same event ids: the store keeps them once)."""
        self._moved: set[str] = set()
        """Games folded (or whose move ended) since the last look."""
        self._slots = asyncio.Semaphore(concurrency)
        self._moves: dict[str, asyncio.Task[None]] = {}
        """The move in flight in each game (one at a time)."""
        self.follower = Follower("bots", feed, self)
        self.caught_up = self.follower.caught_up
        """Set once the runner has read the feed up to its head (the start-up scan)."""

    def start(self) -> None:
        self.follower.start()

    async def stop(self) -> None:
        await self.follower.stop()
        for task in list(self._moves.values()):
            task.cancel()
        for task in list(self._moves.values()):
            with contextlib.suppress(asyncio.CancelledError):
                await task

    async def act(self) -> float:
        """Caught up with the feed: start the moves that are due, then wait for the next
        append (or a move that ended without one)."""
        self.start_due()
        return 0.0 if self._moved else self.tick

    async def fold(self, page: list[RecordedEvent]) -> None:
        for game_id, event in game_events(page, self.tables):
            table = self.tables.get(game_id)
            if table is None:
                if not (isinstance(event.data, SeatClaimed) and event.data.bot):
                    continue
                table = self.tables[game_id] = BotTable()
            if not folded("bots", self.tables, game_id, event):
                continue
            self._moved.add(game_id)
            if table.over or not table.bots:
                del self.tables[game_id]

    def start_due(self) -> int:
        """Start the move of each game that moved and has a bot seat to act (one per game:
        its append moves the game, and the feed brings the rest); returns how many."""
        looks, self._moved = self._moved, set()
        started = 0
        for game_id in looks:
            table = self.tables.get(game_id)
            if table is None or game_id in self._moves:
                continue
            found = table.due()
            if found is None:
                continue
            table.tried = table.version
            seat, level = found
            task = asyncio.create_task(self._move(game_id, seat, level, table.version))
            self._moves[game_id] = task
            started += 1
        return started

    async def _move(self, game_id: str, seat: int, level: str, version: int) -> None:
        try:
            if self.think > 0:
                await asyncio.sleep(self.think)
            async with self._slots:
                await self._play(game_id, seat, level, version)
        except (StoreError, OSError) as error:  # look again once the store answers
            log.warning("bot_move_failed", game_id=game_id, seat=seat, error=str(error))
            table = self.tables.get(game_id)
            if table is not None and table.tried == version:
                table.tried = 0
            await asyncio.sleep(self.tick)
        except Exception as error:  # a bug: logged, and this turn is not tried again here
            log.exception("bot_move_crashed", game_id=game_id, seat=seat, error=repr(error))
        finally:
            self._moves.pop(game_id, None)
            self._moved.add(game_id)
            self.follower.wake()

    async def _play(self, game_id: str, seat: int, level: str, version: int) -> None:
        games = self.games
        command = bot_move(game_id, seat, level, games.seed_chain_hands)
        base = f"bot|{game_id}|{version}|{seat}"
        try:
            outcome = await games.handler.run(
                games.streams, game_id, command, expected=version, id_base=base, once=True
            )
        except (NothingToDo, StaleVersion, Conflict):
            return  # the game moved, or another instance played this turn
        except (ApiError, RuleViolation, UnreadableEvent) as refused:
            log.error("bot_cannot_play", game_id=game_id, seat=seat, error=str(refused))
            return
        self.played += 1
        games.metrics.count_by("bot_moves", "level", level)
        games.metrics.observe_thinking(level, outcome.answer.get(THINKING, 0.0))
        log.info(
            "bot_moved", game_id=game_id, seat=seat, level=level, version=outcome.first_version
        )
