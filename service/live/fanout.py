"""A watched game's deliveries: one pump per game hands each move to every live stream of it.

A thousand streams of one game used to be a thousand tasks woken by each move, each of which
looked at the record, asked what its viewer may see and found its messages. Now the game's
pump does that once per move and per view: for each viewer (a seat, or the spectators) it
asks once what may be seen, encodes the new messages once for every stream standing at the
same version (they share the bytes; never across viewers, so no stream is ever handed what
its viewer may not see) and appends them to each stream's `Outbox`. A stream's own task is
left with writing what its outbox holds.

Each event once, in order: an outbox holds the version it has been handed up to (`last`),
and the pump hands it the events after that, never others. A stream that is `behind` (its
first look at the game, or an outbox it left unread to fill up) catches up by itself, in
pages, from its `last`; the pump leaves it alone meanwhile, and looks again the moment it is
`ready`. So a slow client holds at most `MAX_PENDING` bytes here, and a wake-up missed,
repeated or late can delay an event, never lose or repeat one (service/live/watch.py).

The fast path: a stream whose connection offers one (`Writer`, service/http/direct.py) and
whose task is `parked` (waiting, every byte it was handed written, nothing on its way) gets
the pump's bytes written straight to its connection, framed once per shared encoding, and
its task is not woken. Otherwise, or when the connection cannot take them at once (a client
that has stopped reading, one gone, a stream ending), they go to the outbox as above. Either
way `last` moves past them exactly once, and a stream with bytes in its outbox, or catching
up, or writing, gets none straight: what it has yet to write comes first.
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable
from typing import TYPE_CHECKING, Protocol

from domain.decider import Viewer
from events.store import StoreError
from service.contract.problems import ApiError
from service.ops.logging import log
from service.play.record import GameRecord

if TYPE_CHECKING:
    from service.live.watch import News, Watcher

PAGE = 200
"""Events handed at once: a stream further behind catches up by itself, a page at a time."""
MAX_PENDING = 64 * 1024
"""Bytes an outbox may hold unread; a stream whose client reads slower catches up by itself
once it has written them (from its last version, not from bytes kept for it here)."""
SEALED_POLL = 1.0
"""Seconds between looks at a game whose view the duplicate gate holds back
(service/tournaments/duplicate.py): the other tables' moves wake no stream of this game."""

Visible = Callable[[GameRecord, Viewer], Awaitable[tuple[int, bool]]]
"""The last version a viewer may see in the record, and whether the duplicate gate holds it
back short of what the viewer would see otherwise."""
Encode = Callable[[GameRecord, Viewer, int, int, int], bytes]
"""The messages of versions `first`..`last` for a viewer, as of a visible version."""


class Writer(Protocol):
    """A stream's fast path to its client (service/http/direct.py)."""

    def frame(self, data: bytes) -> bytes:
        """`data` as the connection writes it."""

    def write(self, framed: bytes) -> bool:
        """Write framed bytes now; False, writing nothing, when the connection cannot."""


class Outbox:
    """What one stream is yet to write: bytes the pump appends, its own task takes."""

    __slots__ = (
        "behind",
        "chunks",
        "direct",
        "ended",
        "last",
        "parked",
        "pending",
        "timer",
        "viewer",
        "waiter",
        "wrote",
    )

    def __init__(self, viewer: Viewer, last: int, direct: Writer | None = None) -> None:
        self.viewer = viewer
        self.direct = direct
        self.parked = False
        """Its task is waiting, with nothing on its way to the client: bytes may go straight."""
        self.wrote = 0.0
        """When (loop time) the pump last wrote to it straight, for the stream's heartbeat."""
        self.last = last
        """The version the stream has been handed up to (written, or here to write)."""
        self.chunks: list[bytes] = []
        self.pending = 0
        self.behind = True
        """Catching up by itself (from `last`): the pump leaves it alone."""
        self.ended = False
        """Nothing more will come: the game is over, or the pump failed."""
        self.waiter: asyncio.Future[None] | None = None
        self.timer: asyncio.TimerHandle | None = None

    def take(self) -> bytes:
        """Everything handed and not yet taken, at once (b"" for nothing)."""
        chunks = self.chunks
        if not chunks:
            return b""
        data = chunks[0] if len(chunks) == 1 else b"".join(chunks)
        chunks.clear()
        self.pending = 0
        return data

    def wait(self, until: float) -> asyncio.Future[None]:
        """A future done when something is handed (or the stream falls behind, or ends), or
        at `until` (loop time) at the latest. One timer serves many waits: it is armed again
        only once it has rung or when `until` comes sooner, so a delivery costs no timer."""
        loop = asyncio.get_running_loop()
        self.waiter = waiter = loop.create_future()
        if self.timer is None or self.timer.when() > until:
            if self.timer is not None:
                self.timer.cancel()
            self.timer = loop.call_at(until, self._ring)
        return waiter

    def close(self) -> None:
        if self.timer is not None:
            self.timer.cancel()
            self.timer = None

    def hand(self, chunk: bytes, upto: int) -> None:
        self.chunks.append(chunk)
        self.pending += len(chunk)
        self.last = upto
        self._wake()

    def fall_behind(self) -> None:
        self.behind = True
        self._wake()

    def end(self) -> None:
        self.ended = True
        self._wake()

    def _ring(self) -> None:
        self.timer = None
        self._wake()

    def _wake(self) -> None:
        waiter = self.waiter
        if waiter is not None and not waiter.done():
            waiter.set_result(None)


class Fanout:
    """The live streams of one game, by viewer, and the pump that hands them each move."""

    def __init__(
        self,
        watcher: Watcher,
        news: News,
        game_id: str,
        visible: Visible,
        encode: Encode,
        delivered: Callable[[int], None],
    ) -> None:
        self.watcher, self.news, self.game_id = watcher, news, game_id
        self.visible, self.encode, self.delivered = visible, encode, delivered
        self.views: dict[Viewer, dict[Outbox, None]] = {}
        self._dirty = False
        self._pump_task: asyncio.Task[None] | None = None
        self._poll: asyncio.TimerHandle | None = None

    def join(self, viewer: Viewer, last: int, direct: Writer | None = None) -> Outbox:
        """A new stream's outbox, `behind` until it has caught up by itself."""
        outbox = Outbox(viewer, last, direct)
        self.views.setdefault(viewer, {})[outbox] = None
        return outbox

    def leave(self, outbox: Outbox) -> None:
        outbox.close()
        group = self.views.get(outbox.viewer)
        if group is not None:
            group.pop(outbox, None)
            if not group:
                del self.views[outbox.viewer]
        if not self.views and self._poll is not None:
            self._poll.cancel()
            self._poll = None

    def ready(self, outbox: Outbox) -> None:
        """`outbox` has caught up with the record it last read: from now on the pump hands it
        what follows, starting with a look at once (the game may have moved meanwhile)."""
        outbox.behind = False
        self.kick()

    def kick(self) -> None:
        """The game moved (or may have): the pump looks, once for every kick until it does."""
        self._dirty = True
        if self._pump_task is None and self.views:
            self._pump_task = asyncio.get_running_loop().create_task(self._pump())

    async def _pump(self) -> None:
        try:
            while self._dirty and self.views:
                self._dirty = False
                await self._pass()
        except Exception as error:  # the streams end; each client resumes where it was
            if isinstance(error, ApiError | StoreError):
                log.warning("stream_ended", game_id=self.game_id, error=str(error))
            else:
                log.exception("stream_pump_failed", game_id=self.game_id, error=repr(error))
            for group in self.views.values():
                for outbox in group:
                    outbox.end()
        finally:
            self._pump_task = None

    async def _pass(self) -> None:
        game_id, version = self.game_id, self.news.version
        record = self.watcher.cached(game_id, version) or await self.watcher.record(
            game_id, version
        )
        handed = 0
        held = False
        now = asyncio.get_running_loop().time()
        for viewer, group in list(self.views.items()):
            visible, held_back = await self.visible(record, viewer)
            held = held or held_back
            chunks: dict[int, bytes] = {}  # by the version a stream stands at
            framed: dict[int, bytes] = {}  # the same, as the fast path writes them
            for outbox in group:  # no await in this loop: the group stays as it is
                last = outbox.last
                if outbox.behind or last >= visible:
                    continue
                chunk = chunks.get(last)
                if chunk is None and visible - last <= PAGE:
                    chunk = chunks[last] = self.encode(record, viewer, last + 1, visible, visible)
                if chunk is None or outbox.pending + len(chunk) > MAX_PENDING:
                    outbox.fall_behind()
                    continue
                handed += visible - last
                direct = outbox.direct
                if direct is not None and outbox.parked and not outbox.chunks:
                    data = framed.get(last)
                    if data is None:
                        data = framed[last] = direct.frame(chunk)
                    if direct.write(data):
                        outbox.last, outbox.wrote = visible, now
                        continue
                outbox.hand(chunk, visible)
            if record.finished:
                for outbox in group:
                    if not outbox.behind and outbox.last >= record.version:
                        outbox.end()
        if handed:
            self.delivered(handed)
        if held and self._poll is None and self.views:
            self._poll = asyncio.get_running_loop().call_later(SEALED_POLL, self._polled)

    def _polled(self) -> None:
        self._poll = None
        self.kick()
