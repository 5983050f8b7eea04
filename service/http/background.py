"""The feed's consumers of `fairway serve`, wired: the referee, the bots, the round keeper and,
on Redis, an inline projector, each as its setting asks (FAIRWAY_REFEREE, FAIRWAY_BOTS,
FAIRWAY_ROUND_KEEPER, FAIRWAY_PROJECTOR_INLINE), all run by one `Leader` as FAIRWAY_BACKGROUND
says: once per deployment (`leader`), in every process (`always`) or not here (`never`). They
read the feed through the process's one `SharedFeed` (events/feed.py), as its projector does:
at one checkpoint they share one read per wake-up."""

from __future__ import annotations

from collections.abc import Callable
from datetime import datetime

from events.feed import SharedFeed
from events.store import EventStore
from service.bots.runner import BotRunner
from service.ops.leader import Consumer, Leader
from service.ops.metrics import Metrics
from service.ops.settings import Settings
from service.play.games import GameService
from service.read.projections import ProjectionService
from service.referee.referee import Referee
from service.tournaments.rounds import RoundKeeper
from service.tournaments.service import TournamentService


def bot_slots(settings: Settings) -> int:
    """Bot moves in flight at once inside `fairway serve`: FAIRWAY_BOT_CONCURRENCY, and never
    more than half the store's pool, so that bots never keep the players' requests waiting
    for a connection."""
    return max(1, min(settings.bot_concurrency, settings.pool_size // 2))


def background(
    settings: Settings,
    primary: EventStore,
    feed: SharedFeed,
    games: GameService,
    tournaments: TournamentService,
    projections: ProjectionService,
    metrics: Metrics,
    referee_clock: Callable[[], datetime],
) -> list[Leader]:
    """The consumers this process may run, under their leaders (not started): the referee,
    bots and round keeper under the installation's `background` lead; a projector on Redis
    under a lead of its own per key prefix (the read models it writes are shared by whoever
    reads that prefix, which may be another set of instances on the same database). An
    in-memory projector is not among them: each process keeps its own read models (the
    caller runs it). `feed`: the process's shared feed (around a replica's, when one is
    named)."""
    referee = Referee(feed, games, now=referee_clock, tick=settings.referee_tick)
    metrics.sample("referee_tables", lambda: len(referee.tables))
    consumers: list[Consumer] = []
    if settings.referee:
        consumers.append(referee)
    if settings.bots:
        bots = BotRunner(feed, games, think=settings.bot_think, concurrency=bot_slots(settings))
        consumers.append(bots)
    if settings.round_keeper:
        consumers.append(RoundKeeper(feed, tournaments))
    leader = Leader(primary, consumers, settings.background)
    metrics.sample("background_leader", lambda: float(leader.leading))
    leaders = [leader]
    if projections.shared and projections.projector is not None:
        projector = f"projector:{settings.redis_prefix}"
        leaders.append(Leader(primary, [projections], settings.background, name=projector))
    return leaders
