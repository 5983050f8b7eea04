"""One round keeper per process: it closes a tournament's round once its last game has ended,
and starts the next of a tournament whose rounds start by themselves (`auto_rounds`).

It tails the store's global feed, like the watcher (service/live/watch.py), and for each
`game.ended` of a tournament's table asks the tournament service to close that
tournament's open round, and for each `round.closed` to start the next if the tournament
says so; at startup it checks every tournament once, so a round whose last game ended (or
that closed) while no instance ran is closed (or followed) too. With several instances
each may try: the round closes once, since `round.closed` is appended at the version its
check was made on, and the next starts once, as two starts by the organiser would.
"""

from __future__ import annotations

import asyncio

from events.store import Checkpoint, EventStore, Unreadable, UnreadableEvent
from service.contract.problems import ApiError
from service.ops.background import Background
from service.ops.logging import log
from service.tournaments.record import PREFIX
from service.tournaments.service import TournamentService

FEED_PAGE = 1000
IDLE_CHECK = 5.0
RETRY_AFTER = 1.0
"""Seconds to wait after the store failed before trying again."""


class RoundKeeper:
    def __init__(
        self, store: EventStore, tournaments: TournamentService, idle_check: float = IDLE_CHECK
    ) -> None:
        self.store = store
        self.tournaments = tournaments
        self.idle_check = idle_check
        self._background = Background("fairway-round-keeper", self._run)

    def start(self) -> None:
        self._background.start()

    async def stop(self) -> None:
        await self._background.stop()

    async def _run(self) -> None:
        while True:
            try:
                # The head first: a game that ends during the sweep is in the feed after it.
                after = await self.store.feed_head()
                for tournament_id in await self.tournaments.tournament_ids():
                    await self._close(tournament_id)
                    await self._advance(tournament_id)
                await self._tail(after)
            except asyncio.CancelledError:
                raise
            except Exception as exc:  # the store failed: start again, sweep included
                log.warning("round_keeper_failed", error=repr(exc))
                await asyncio.sleep(RETRY_AFTER)

    async def _tail(self, after: Checkpoint) -> None:
        while True:
            if not await self.store.wait_for_events(after, self.idle_check):
                continue
            page = await self.store.read_feed(after, FEED_PAGE)
            ended, closed = [], []
            for item in page:
                after = item.checkpoint
                if item.type == "round.closed" and item.stream_id.startswith(PREFIX):
                    closed.append(item.stream_id.removeprefix(PREFIX))
                if (
                    item.type == "game.ended"
                    and item.stream_id.startswith("game:")
                    and type(item.data) is not Unreadable
                ):
                    ended.append(item.stream_id.removeprefix("game:"))
            for game_id in ended:
                try:
                    record = await self.tournaments.games.load(game_id)
                except UnreadableEvent as exc:  # (the store has reported it) not this one's
                    log.warning("round_not_closed", game_id=game_id, error=str(exc))
                    continue
                if record.lobby.tournament:
                    await self._close(record.lobby.tournament)
            for tournament_id in dict.fromkeys(closed):
                await self._advance(tournament_id)

    async def _close(self, tournament_id: str) -> None:
        try:
            await self.tournaments.close_round(tournament_id)
        except (ApiError, UnreadableEvent) as exc:  # one tournament's trouble stops no other
            log.warning("round_not_closed", tournament_id=tournament_id, error=str(exc))

    async def _advance(self, tournament_id: str) -> None:
        try:
            await self.tournaments.advance(tournament_id)
        except (ApiError, UnreadableEvent) as exc:  # one tournament's trouble stops no other
            log.warning("round_not_started", tournament_id=tournament_id, error=str(exc))
