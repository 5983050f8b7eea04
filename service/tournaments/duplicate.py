"""The duplicate gate: a table's finished hands stay hidden while another table of its round
may still have to play them.

With duplicate deals every table of a round is dealt the same cards (`GameCreated.peers`,
docs/TOURNAMENTS.md). A hand that has ended at table A is then a hand still to come at table
B, so what a hand's end makes public at A (its hidden cards, its seeds, its replay; and a
live hand's face-up cards once A is ahead of B) would tell B's coming cards to anyone
reading A. So a reader not seated at A sees A only as far as every other table of the round
has played: through hand m, where m is the fewest hands any peer still in play has
finished, and never A's chain secret (it reveals every server seed of the round) until every
peer is over. Once every peer is over the game is public as any other.

The gate is a version, like the spectator delay (service/live/spectators.py): every read path
that shows a game to a reader not seated in it asks `visible` for the last version it may
show, and the redaction as of that version does the rest. Paths that show a whole game
(the audit, the export) or every card of a hand (the replay) ask `require_open` /
`require_hand` and are refused with 409 `deals_to_come` while the round hides what they
would show. A seat sees its own game whole, as it played it.

Peers' progress comes from their records: the cached record when this process has read it
within `refresh` seconds (this process's own appends keep it current), else loaded from the
store. A stale record only shows a peer behind where it is, so staleness hides more, never
less. A game over stays over: such peers are remembered and never read again.
"""

from __future__ import annotations

import asyncio
import time
from bisect import bisect_right
from collections import OrderedDict
from collections.abc import Sequence
from typing import Literal, TypeVar

from domain.decider import Viewer
from events.codec import default_codec
from events.schema.lobby import GameCreated
from events.stored import StoredRow
from service.contract.problems import ApiError
from service.live.spectators import visible_version
from service.play.games import GameService
from service.play.record import GameRecord

REFRESH = 0.25
"""Seconds a peer's cached record is trusted before it is caught up with the store (other
instances' appends); the gate's worst staleness across instances."""
T = TypeVar("T")
CODEC = default_codec()
REMEMBERED = 100_000
"""Games remembered as over (16-character ids: a few MB at most)."""


class DuplicateGate:
    def __init__(self, games: GameService, refresh: float = REFRESH) -> None:
        self.games = games
        self.refresh = refresh
        self._over: OrderedDict[str, None] = OrderedDict()
        self._read_at: OrderedDict[str, float] = OrderedDict()

    # ---- what a reader may see -------------------------------------------------------

    async def public_hands(self, game_id: str, peers: Sequence[str]) -> int | None:
        """m: the hands of game `game_id` (of the round `peers`) every reader may know,
        because every other table of the round has finished them (or is over); None when
        the gate hides nothing (a game whose deals are its own, or every other table over)."""
        others = [peer for peer in peers if peer != game_id and peer not in self._over]
        if not others:
            return None
        now = time.monotonic()
        known = [self._cached(peer, now) for peer in others]  # no await: the common case
        stale = [peer for peer, hands in zip(others, known, strict=True) if hands is False]
        loaded = await asyncio.gather(*(self._progress(peer, now) for peer in stale))
        progress = [hands for hands in known if hands is not False] + loaded
        live = [hands for hands in progress if hands is not None]
        return min(live) if live else None

    async def sealed(self, record: GameRecord) -> int | None:
        """The last version of `record` a reader not seated in it may see now, or None when
        nothing is sealed: the version before the first deal of a hand past m, and before
        `game.ended` (whose redaction would show the chain secret)."""
        hands = await self.public_hands(record.game_id, peers_of(record))
        if hands is None:
            return None
        version = bisect_right(record.entries, hands, key=lambda entry: entry.hand)
        if record.finished:
            version = min(version, record.ended_at - 1)
        return version

    async def visible(self, record: GameRecord, viewer: Viewer, delay: int) -> int:
        """The last version `viewer` may see: a seat its whole game, anyone else the
        spectator horizon, no further than the round allows."""
        version = visible_version(record, viewer, delay)
        if viewer is not None:
            return version
        sealed = await self.sealed(record)
        return version if sealed is None else min(version, sealed)

    async def require_open(self, game_id: str, peers: Sequence[str]) -> None:
        """Refuse (409 `deals_to_come`) what shows the whole game while the round hides
        any of it. `peers` as the game's `game.created` names them: the audit and the
        export read the stored rows, which may fail the checks that loading a record makes."""
        if await self.public_hands(game_id, peers) is not None:
            raise ApiError(
                409,
                "deals_to_come",
                f"game {game_id} is a table of a duplicate round still in play: its deals "
                "are to come at another table; it is shown whole once every table has ended",
            )

    async def held_now(self, game_id: str, delay: int) -> tuple[GameRecord, int] | None:
        """The game's record and the last version a reader not seated in it may see now
        (`visible`: the spectator delay, the round), or None when such a reader sees the
        game as it is; for read paths that do not start from the record (the read models,
        the replay, the audit). A game's peers never change: without a delay, a cached
        record tells whether there is anything to hold back."""
        if delay <= 0:
            slot = self.games.cache.get(game_id)
            record = slot.record if slot is not None else await self.games.load(game_id)
            if not peers_of(record):
                return None
        record = await self.games.load(game_id)
        version = await self.visible(record, None, delay)
        return None if version >= record.version else (record, version)

    async def require_hand(self, game_id: str, hand: int) -> None:
        """Refuse (409 `deals_to_come`) hand `hand`'s every card while a table of the round
        still has it to play. A game's peers never change: a cached record tells them."""
        slot = self.games.cache.get(game_id)
        record = slot.record if slot is not None else await self.games.load(game_id)
        hands = await self.public_hands(game_id, peers_of(record))
        if hands is not None and hand > hands:
            raise ApiError(
                409,
                "deals_to_come",
                f"hand {hand} of game {game_id} is still to be played at another table of its "
                "duplicate round: it is shown once every table has played it",
            )

    # ---- peers' progress -------------------------------------------------------------

    def _cached(self, game_id: str, now: float) -> int | Literal[False] | None:
        """The peer's progress from a record read within `refresh` seconds, else False."""
        slot = self.games.cache.get(game_id)
        if slot is None or now - self._read_at.get(game_id, -self.refresh) >= self.refresh:
            return False
        return self._hands(slot.record)

    async def _progress(self, game_id: str, now: float) -> int | None:
        """The peer's progress caught up with the store. A peer not created yet (a round's
        games are created one by one) has finished no hand."""
        try:
            record = await self.games.load(game_id)
        except ApiError as error:
            if error.status == 404:
                return 0
            raise
        self._remember(self._read_at, game_id, now)
        return self._hands(record)

    def _hands(self, record: GameRecord) -> int | None:
        """How many hands the peer has finished, None once it is over (and remembered)."""
        if record.finished:
            self._remember(self._over, record.game_id, None)
            self._read_at.pop(record.game_id, None)
            return None
        return max(record.hand_ended_at, default=0)

    @staticmethod
    def _remember(memo: OrderedDict[str, T], key: str, value: T) -> None:
        memo[key] = value
        memo.move_to_end(key)
        if len(memo) > REMEMBERED:
            memo.popitem(last=False)


def peers_of(record: GameRecord) -> tuple[str, ...]:
    """The games of the record's duplicate round (empty for a game dealt on its own)."""
    created = record.entries[0].event
    return created.peers if isinstance(created, GameCreated) else ()


def peers_in(rows: Sequence[StoredRow]) -> tuple[str, ...]:
    """The same, from a game's stored rows. A first row that does not decode names none:
    its audit reports it, and its export is refused as corrupt before any card is shown."""
    if not rows or rows[0].type != "game.created":
        return ()
    try:
        created = CODEC.decode(rows[0].type, rows[0].schema_version, rows[0].data)
    except Exception:  # whatever a damaged row raises: the audit names the damage
        return ()
    return created.peers if isinstance(created, GameCreated) else ()
