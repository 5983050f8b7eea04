"""GET /games/{id}/stream: the game's events as Server-Sent Events, live, for one viewer.

Each message is one entry of the event feed (`feed()`, the same gate as GET /events), with
the game version as its SSE `id` and the public event type as its SSE `event`. A client that
reconnects sends the last id it saw (`Last-Event-ID`, which EventSource does by itself) or
`?after=N`, and gets every event after it, once, in order. What is sent is decided by the
stream's own last version against the game's record, never by the wake-up that prompted it
(service/live/watch.py). A spectator's stream stops at the spectator horizon
(service/live/spectators.py). An idle stream gets a comment every FAIRWAY_SSE_HEARTBEAT seconds.

A stream is held, not owned: one client address holds at most FAIRWAY_MAX_STREAMS_PER_CLIENT
at once (one more is 429 `too_many_streams`), and each ends after FAIRWAY_SSE_LIFETIME with a
reconnect hint, whether its game moves or not (a game left in its lobby never would): the
client comes back through the rate limit and the caps, and resumes where it was.

Delivery: a stream catches up by itself, a page per write, then writes what the game's pump
hands its outbox (service/live/fanout.py): per move, one look and one encoding per view for
every stream of the game, and one write per stream. While the stream waits with nothing on
its way, the pump writes straight to its connection instead, when the connection offers that
(service/http/direct.py), and the stream's task is not woken. Backpressure: each write waits
until the connection takes it (uvicorn pauses a writer whose transport buffer is full; the
fast path then leaves the bytes to the outbox); a slow client holds at most one page, or an
outbox of `MAX_PENDING` bytes, here, and catches up from its last version when it drains.
"""

from __future__ import annotations

import asyncio
import functools
import random
from collections.abc import AsyncIterator
from typing import Annotated, Any, cast

import msgspec
from litestar import Controller, Request, Response, get
from litestar.di import NamedDependency
from litestar.params import HeaderParameter, Parameter
from litestar.response import Stream

from domain.decider import Viewer
from events.store import StoreError
from service.contract.problems import ApiError
from service.http import docs
from service.http.chain import feed
from service.http.direct import DIRECT
from service.http.middleware import HEAD, StreamSlots
from service.http.params import GameId, Gate, SpectatorDelay, bearer
from service.live.fanout import PAGE, Fanout, Writer
from service.live.spectators import visible_version
from service.live.watch import News, Watcher
from service.ops.logging import log
from service.ops.metrics import Metrics
from service.play.games import GameService
from service.play.record import GameRecord
from service.tournaments.duplicate import DuplicateGate

EVENT_STREAM = "text/event-stream"
RETRY_MS = 2000
"""The reconnection delay suggested to clients (SSE `retry:`)."""
LIFETIME_SPREAD = 0.1
"""A stream ends between 90 and 100 % of its lifetime: a crowd that connected together (after
a restart) does not come back together."""
LIFETIME_OVER = b": lifetime over; reconnect with Last-Event-ID\nretry: %d\n\n" % RETRY_MS
"""The last message of a stream that outlived its lifetime."""
TOO_MANY_STREAMS_RETRY = "5"

LastEventId = Annotated[
    str | None,
    HeaderParameter(
        name="Last-Event-ID",
        required=False,
        pattern=r"^\s*[0-9]{1,8}\s*$",
        description="The `id` of the last message received: the stream resumes after it "
        "(EventSource sends it by itself when it reconnects). Takes precedence over `after`.",
    ),
]
After = Annotated[
    int | None,
    Parameter(
        ge=0,
        le=10_000_000,
        description="Resume after this version (for a first connect, where EventSource "
        "cannot send `Last-Event-ID`); 0 or absent: from the first event.",
    ),
]

_ENCODE = msgspec.json.Encoder()


class StreamController(Controller):
    path = "/games"
    tags = ["games"]

    @get(
        "/{game_id:str}/stream",
        operation_id="streamEvents",
        summary="The game's events as they happen (Server-Sent Events), for the viewer",
        media_type=EVENT_STREAM,
        responses=docs.STREAM,
    )
    async def stream(
        self,
        game_id: GameId,
        request: Request[Any, Any, Any],
        games: NamedDependency[GameService],
        watcher: NamedDependency[Watcher],
        metrics: NamedDependency[Metrics],
        spectator_delay: SpectatorDelay,
        gate: Gate,
        sse_heartbeat: NamedDependency[float],
        sse_lifetime: NamedDependency[float],
        stream_slots: NamedDependency[StreamSlots],
        after: After = None,
        last_event_id: LastEventId = None,
    ) -> Response[Any]:
        """Without a token, what a spectator may know; with a seat token, that seat's view.
        A stream of a finished game ends after `game.ended`; connecting when nothing is left
        to send gets 204, which tells EventSource to stop reconnecting. Any stream ends after
        FAIRWAY_SSE_LIFETIME with a `retry:` hint: reconnect with `Last-Event-ID`."""
        token = bearer(request)
        record = await watcher.fresh(game_id)  # one query for a crowd connecting at once
        viewer = None if token is None else games.seat_for(record, token)
        start = int(last_event_id) if last_event_id is not None else (after or 0)
        visible = await gate.visible(record, viewer, spectator_delay)
        if start > visible:
            source = "Last-Event-ID" if last_event_id is not None else "after"
            raise ApiError(
                400, "invalid_request", f"{source} {start} is past the game's version {visible}"
            )
        if record.finished and start >= record.version:
            return Response(None, status_code=204)
        headers = {"Cache-Control": "no-cache", "X-Accel-Buffering": "no"}
        if request.scope.get(HEAD):  # headers only, not for ever
            return Stream((), media_type=EVENT_STREAM, headers=headers)
        if not stream_slots.take(request.scope):  # given back when the request ends
            raise ApiError(
                429,
                "too_many_streams",
                f"this client holds {stream_slots.per_client} event streams open, the most one "
                "client may; close one first",
                headers={"Retry-After": TOO_MANY_STREAMS_RETRY},
            )
        lifetime = sse_lifetime * random.uniform(1 - LIFETIME_SPREAD, 1)
        offered = (request.scope.get("extensions") or {}).get(DIRECT) or {}
        direct = cast("Writer | None", offered.get("writer"))
        live = Live(watcher, metrics, gate, game_id, viewer, spectator_delay, sse_heartbeat, direct)
        return Stream(live.messages(start, lifetime), media_type=EVENT_STREAM, headers=headers)


class Live:
    """One viewer's stream of one game: it catches up by itself, then writes what the
    game's pump hands its outbox (service/live/fanout.py)."""

    def __init__(
        self,
        watcher: Watcher,
        metrics: Metrics,
        gate: DuplicateGate,
        game_id: str,
        viewer: Viewer,
        delay: int,
        heartbeat: float,
        direct: Writer | None = None,
    ) -> None:
        self.watcher, self.metrics, self.gate = watcher, metrics, gate
        self.game_id, self.viewer, self.delay, self.heartbeat = game_id, viewer, delay, heartbeat
        self.direct = direct
        """The connection's fast path, if it offers one (service/http/direct.py)."""

    async def messages(self, last: int, lifetime: float) -> AsyncIterator[bytes]:
        """Everything after version `last`, then each event as the game reaches it, for
        `lifetime` seconds at most."""
        loop = asyncio.get_running_loop()
        self.metrics.gauge("sse_streams_open", 1)
        try:
            with self.watcher.subscribe(self.game_id) as news:
                yield b"retry: %d\n\n" % RETRY_MS
                await self.watcher.ready()  # it follows the feed from before our first look
                fanout = news.fanout or self._fanout(news)
                outbox = fanout.join(self.viewer, last, self.direct)
                try:
                    over_at = loop.time() + lifetime
                    quiet_until = loop.time() + self.heartbeat
                    fresh = True
                    while True:
                        if data := outbox.take():  # before any catching up: in order
                            yield data
                            quiet_until = loop.time() + self.heartbeat
                            continue
                        if outbox.behind:  # the first look, or after leaving the outbox full
                            try:
                                # The first look reads the store itself: news that came
                                # before this stream subscribed was never announced to it.
                                record = (
                                    await self.watcher.fresh(self.game_id)
                                    if fresh
                                    else await self.watcher.record(self.game_id, news.version)
                                )
                                fresh = False
                                visible, _ = await self.visible(record, self.viewer)
                            except (ApiError, StoreError) as error:
                                log.warning("stream_ended", game_id=self.game_id, error=str(error))
                                return  # the client reconnects, and hears the problem then
                            while outbox.last < visible:
                                first, upto = outbox.last + 1, min(visible, outbox.last + PAGE)
                                yield self.page(record, self.viewer, first, upto, visible)
                                self.metrics.count("sse_events_delivered", upto - outbox.last)
                                outbox.last = upto
                                quiet_until = loop.time() + self.heartbeat
                            if record.finished and outbox.last >= record.version:
                                return
                            fanout.ready(outbox)
                        if outbox.ended:
                            return
                        now = loop.time()
                        if now >= over_at:
                            yield LIFETIME_OVER
                            return
                        if now >= quiet_until:
                            yield b": keep-alive\n\n"
                            quiet_until = now + self.heartbeat
                            continue
                        if not outbox.behind:
                            outbox.parked = True  # the pump may write to the client straight
                            try:
                                await outbox.wait(min(quiet_until, over_at))
                            finally:
                                outbox.parked = False
                            quiet_until = max(quiet_until, outbox.wrote + self.heartbeat)
                finally:
                    fanout.leave(outbox)
        finally:
            self.metrics.gauge("sse_streams_open", -1)

    def _fanout(self, news: News) -> Fanout:
        """The game's pump, made by its first stream (every stream of a process shares the
        gate, the delay and the cache it uses)."""
        news.fanout = Fanout(
            self.watcher,
            news,
            self.game_id,
            self.visible,
            self.page,
            functools.partial(self.metrics.count, "sse_events_delivered"),
        )
        return news.fanout

    async def visible(self, record: GameRecord, viewer: Viewer) -> tuple[int, bool]:
        """The last version `viewer` may see, and whether the duplicate gate holds it back."""
        visible = await self.gate.visible(record, viewer, self.delay)
        return visible, visible < visible_version(record, viewer, self.delay)

    def page(self, record: GameRecord, viewer: Viewer, first: int, last: int, as_of: int) -> bytes:
        key = (self.game_id, viewer, first, last, as_of)
        return self.watcher.memo(
            key, functools.partial(messages, record, viewer, first, last, as_of)
        )


def messages(record: GameRecord, viewer: Viewer, first: int, last: int, as_of: int) -> bytes:
    """Events `first`..`last` as SSE messages, redacted for `viewer` as of `as_of`."""
    return b"".join(
        b"id: %d\nevent: %s\ndata: %s\n\n"
        % (entry.version, str(entry.event.__struct_config__.tag).encode(), _ENCODE.encode(entry))
        for entry in feed(record, viewer, first, last, as_of)
    )
