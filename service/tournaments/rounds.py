"""One round keeper per deployment (service/ops/leader.py): it closes a tournament's round
once its last game has ended, and starts the next of a tournament whose rounds start by
themselves (`auto_rounds`).

It follows the store's global feed (service/ops/follower.py), and for each `game.ended` of a
tournament's table asks the tournament service to close that
tournament's open round, and for each `round.closed` to start the next if the tournament
says so; at startup it checks every tournament once, so a round whose last game ended (or
that closed) while no instance ran is closed (or followed) too. With several instances
each may try: the round closes once, since `round.closed` is appended at the version its
check was made on, and the next starts once, as two starts by the organiser would.
"""

from __future__ import annotations

from events.feed import Feed
from events.store import Checkpoint, RecordedEvent, Unreadable, UnreadableEvent
from service.contract.problems import ApiError
from service.ops.follower import Follower
from service.ops.logging import log
from service.tournaments.record import PREFIX
from service.tournaments.service import TournamentService

IDLE_CHECK = 5.0


class RoundKeeper:
    def __init__(
        self, feed: Feed, tournaments: TournamentService, idle_check: float = IDLE_CHECK
    ) -> None:
        self.tournaments = tournaments
        self.idle_check = idle_check
        self._ended: list[str] = []
        """Games whose end the feed has shown and whose round is not yet looked at."""
        self._closed: list[str] = []
        """Tournaments whose round the feed has shown closed, the next not yet looked at."""
        self.follower = Follower("round_keeper", feed, self, start_at=self._sweep)

    def start(self) -> None:
        self.follower.start()

    async def stop(self) -> None:
        await self.follower.stop()

    async def _sweep(self) -> Checkpoint:
        """At start and after a failure: every tournament once; the feed from the head taken
        first, so a game that ends during the sweep is in the feed after it."""
        self._ended.clear()
        self._closed.clear()
        after = await self.follower.feed.feed_head()
        for tournament_id in await self.tournaments.tournament_ids():
            await self._close(tournament_id)
            await self._advance(tournament_id)
        return after

    async def fold(self, page: list[RecordedEvent]) -> None:
        for item in page:
            if item.type == "round.closed" and item.stream_id.startswith(PREFIX):
                self._closed.append(item.stream_id.removeprefix(PREFIX))
            if (
                item.type == "game.ended"
                and item.stream_id.startswith("game:")
                and type(item.data) is not Unreadable
            ):
                self._ended.append(item.stream_id.removeprefix("game:"))

    async def act(self) -> float:
        ended, self._ended = self._ended, []
        for game_id in ended:
            try:
                record = await self.tournaments.games.load(game_id)
            except UnreadableEvent as exc:  # (the store has reported it) not this one's
                log.warning("round_not_closed", game_id=game_id, error=str(exc))
                continue
            if record.lobby.tournament:
                await self._close(record.lobby.tournament)
        closed, self._closed = self._closed, []
        for tournament_id in dict.fromkeys(closed):
            await self._advance(tournament_id)
        return self.idle_check

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
