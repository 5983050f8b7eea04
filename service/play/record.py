"""One game as this process knows it: its events folded into lobby and domain state.

The record is a cache: everything in it is derived from the game's stream, so any instance
can rebuild it, and a stale one is caught by the expected version on append.
"""

from __future__ import annotations

from array import array
from collections.abc import Mapping
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

import msgspec

from domain.decider import Decider, Status, Viewer
from domain.seed_chain import SeedChain
from domain.variants import start
from events.schema.common import GameEnded, GameStarted, HandDealt, HandEnded
from events.schema.lobby import (
    GameCreated,
    GameRematched,
    SeatClaimed,
    SeatReleased,
    SeatResigned,
    SeatSeedSet,
    SeedChainExtended,
    TurnPlayedFor,
)
from service.commands.keys import KeyUse, note_use
from service.play.lobby import Lobby
from service.play.turns import TurnStarts

ACTION = "action"
"""On the events an action caused: the action as the seat sent it (its JSON shape), so an
auditor can decide it again and compare (absent on events stored before it was recorded).
It may name hidden cards (a Tens-shedding setup): no viewer sees metadata before the hand is
over."""
PLAYED_FOR = "played_for"
"""On the events of a turn the service played for a seat: why (`timeout`, `resigned`,
`withdrawn`), as the `turn.played_for` event that opens the append says."""
RECORD_OVERHEAD = 8
LINK_SIZE = 32
"""Bytes in a hash-chain link (SHA-256)."""
_UNKNOWN_LINK = bytes(LINK_SIZE)


class Entry(msgspec.Struct, frozen=True, gc=False):
    """A stored event with what the feed needs to redact it (its chain link is the record's,
    `GameRecord.link`).

    Not tracked by the garbage collector: a game's cache holds one per event, and an entry
    (two ints and an immutable event) can never be part of a cycle; tracked, they made every
    full collection a pause of tens of milliseconds under load (docs/BENCHMARKS.md)."""

    version: int
    event: Any
    hand: int
    """The hand the event belongs to (0: before the first deal)."""


@dataclass(slots=True)
class GameRecord:
    game_id: str
    lobby: Lobby
    version: int = 0
    decider: Decider | None = None
    state: Any = None
    entries: list[Entry] = field(default_factory=list)
    links: bytearray = field(default_factory=bytearray)
    """Each entry's hash-chain link as stored, `LINK_SIZE` bytes an entry in order (zeros
    for one folded from an append that did not report it; see `link`). One buffer, where a
    bytes object on each entry cost 73 bytes more an event."""
    hand_ended_at: dict[int, int] = field(default_factory=dict)
    """The version of each hand's `hand.ended` event."""
    keys: dict[tuple[str, str], KeyUse] = field(default_factory=dict)
    """Idempotency keys used in this game, by (scope, key)."""
    finished: bool = False
    """Whether `game.ended` has been folded: the game is over."""
    ended_at: int = 0
    """The version of `game.ended` (0 while the game is not over)."""
    chains: list[SeedChain] = field(default_factory=list)
    """The game's seed chains, in order (none for a game created before them)."""
    seeds_since_deal: dict[int, int] = field(default_factory=dict)
    """How many times each seat set its seed since the last deal (or since the lobby
    opened): the service bounds it, so a seat cannot grow the game's history at will."""
    head_hash: bytes = b""
    """The hash-chain link of the last event folded (empty when it came from an append that
    did not report one)."""
    action_starts: array[int] = field(default_factory=lambda: array("l"))
    """The first version of each seat action's events, in order: what a delayed spectator's
    view counts back (service/live/spectators.py). An array: 8 bytes an action, where a list of
    ints costs about 36."""
    last_append: object = None
    """What the events of the last append folded share (see `apply`)."""
    spectator_memo: tuple[int, Any] | None = None
    """The last state folded for a delayed spectator, with its version
    (service/live/spectators.py)."""
    turns: TurnStarts | None = None
    """Where each acting seat's turn began (service/play/turns.py), in a game with a turn clock."""
    turn_times: dict[int, datetime] = field(default_factory=dict)
    """The recorded time of the events that began the current turns, where known (events
    read from the store; an event appended here is looked up when first asked for)."""

    rematch: str = ""
    """The id of this finished game's rematch (`game.rematched`), empty before one."""

    @classmethod
    def begin(cls, game_id: str, created: GameCreated, chain_hash: bytes = b"") -> GameRecord:
        record = cls(game_id=game_id, lobby=Lobby.created(created))
        if created.seed_hands:
            chain = SeedChain(1, created.seed_hands, created.seed_anchor, created.seed_secret, 1)
            record.chains.append(chain)
        record.entries.append(Entry(1, created, 0))
        record._link(chain_hash)
        record.version = 1
        record.head_hash = chain_hash
        return record

    @property
    def started(self) -> bool:
        return self.decider is not None

    def status(self) -> Status | None:
        return None if self.decider is None else self.decider.status(self.state)

    @property
    def weight(self) -> int:
        """What the record costs to keep, in events (the cache's unit of size): its events
        plus the record's own fixed cost, which is about that of 8 events (a game in its
        lobby takes about 1.3 KB, an event of a live game about 150 B;
        benchmarks/memory_bench.py)."""
        return len(self.entries) + RECORD_OVERHEAD

    def apply(
        self,
        version: int,
        event: Any,
        metadata: Mapping[str, Any],
        chain_hash: bytes = b"",
        append: object = None,
        recorded_at: datetime | None = None,
    ) -> None:
        """Fold one stored event. Versions arrive in order; one already folded is skipped,
        since overlapping catch-ups (two readers, or a reader and the appender) deliver the
        same stored event more than once, and a version holds one event for ever.

        `append` is what the events of one append share and the next append does not: the
        store's recorded time with the metadata for a stored event (one transaction stamps
        every row alike), the append's first version for one folded as appended. A seat's
        action starts at the first event of an append whose metadata names a seat once the
        game has started; the deal appended with it belongs to it."""
        if version <= self.version:
            return
        if version != self.version + 1:
            raise ValueError(f"{self.game_id}: version {version} after {self.version}")
        if append is None or append != self.last_append:
            if self.decider is not None and isinstance(metadata.get("seat"), int):
                self.action_starts.append(version)
            self.last_append = append
        hand = self.entries[-1].hand if self.entries else 0
        if isinstance(event, SeatClaimed):
            self.lobby = self.lobby.claimed(event)
        elif isinstance(event, SeatReleased):
            self.lobby = self.lobby.released(event)
        elif isinstance(event, SeatSeedSet):
            self.lobby = self.lobby.seed_set(event)
            self.seeds_since_deal[event.seat] = self.seeds_since_deal.get(event.seat, 0) + 1
        elif isinstance(event, SeatResigned):
            self.lobby = self.lobby.seat_resigned(event)
        elif isinstance(event, GameRematched):
            self.rematch = event.game_id
        elif isinstance(event, TurnPlayedFor):
            pass  # says who played the action that follows; the domain folds nothing
        elif isinstance(event, SeedChainExtended):
            self.lobby = self.lobby.chain_extended()
            self.chains.append(
                SeedChain(event.first_hand, event.hands, event.anchor, event.secret, version)
            )
        elif isinstance(event, GameStarted):
            self.decider, self.state = start(event)
            if event.options.turn_seconds is not None:
                self.turns = TurnStarts()
        elif self.decider is not None:
            self.state = self.decider.evolve(self.state, event)
            if self.turns is not None:
                self._turn_moved(version, recorded_at)
            if isinstance(event, HandDealt):
                hand = event.hand
                self.seeds_since_deal.clear()
            elif isinstance(event, HandEnded):
                self.hand_ended_at[event.hand] = version
            elif isinstance(event, GameEnded):
                self.finished = True
                self.ended_at = version
        self.entries.append(Entry(version, event, hand))
        self._link(chain_hash)
        self.version = version
        self.head_hash = chain_hash
        seat = metadata.get("seat")
        note_use(self.keys, metadata, version, f"seat:{seat}" if isinstance(seat, int) else None)

    def _link(self, chain_hash: bytes) -> None:
        if chain_hash and len(chain_hash) != LINK_SIZE:
            raise ValueError(f"{self.game_id}: a chain link of {len(chain_hash)} bytes")
        self.links += chain_hash or _UNKNOWN_LINK

    def link(self, version: int) -> bytes:
        """The hash-chain link of the event at `version` as stored (empty only for an event
        folded from an append that did not report it)."""
        link = bytes(self.links[(version - 1) * LINK_SIZE : version * LINK_SIZE])
        return b"" if link == _UNKNOWN_LINK else link

    def _turn_moved(self, version: int, recorded_at: datetime | None) -> None:
        assert self.turns is not None
        assert self.decider is not None
        self.turns.advance(self.decider.status(self.state), version)
        began = set(self.turns.since.values())
        if recorded_at is not None and version in began:
            self.turn_times[version] = recorded_at
        for old in [v for v in self.turn_times if v not in began]:
            del self.turn_times[old]

    def state_at(self, version: int) -> Any:
        """The play state just after `version`, folded again by the same decider when the
        record has moved on since (an answer replayed for a retried request is the first
        answer exactly)."""
        if version >= self.version:
            return self.state
        decider, state = None, None
        for entry in self.entries[:version]:
            if isinstance(entry.event, GameStarted):
                decider, state = start(entry.event)
            elif decider is not None:
                state = decider.evolve(state, entry.event)
        return state

    def hand_over(self, entry: Entry, as_of: int) -> bool:
        """Whether the hand `entry` belongs to had ended by version `as_of`."""
        ended = self.hand_ended_at.get(entry.hand)
        return ended is not None and ended <= as_of

    def knows_whole(self, entry: Entry, viewer: Viewer, as_of: int) -> bool:
        """Whether `viewer` may know every byte of the event as of `as_of`: its hand is
        over, or nothing in it is hidden from them. Only then may they see its event id and
        metadata: with those, the chain hash would let them try each card a hidden field
        could hold (52 tries) and find the one that hashes right."""
        if self.hand_over(entry, as_of):
            return True
        if isinstance(entry.event, TurnPlayedFor):
            # Its metadata names the action played, as the action's own events' does: it
            # is known whole exactly where the action's first event is.
            following = entry.version  # the index of the next entry
            return (
                following < len(self.entries)
                and self.entries[following].version <= as_of
                and self.knows_whole(self.entries[following], viewer, as_of)
            )
        return bool(self.redact(entry, viewer, as_of) == entry.event)

    def shows_hash(self, entry: Entry, viewer: Viewer, as_of: int) -> bool:
        """Whether the event's chain hash may be shown to `viewer`: when they know the whole
        event, and on the lobby events whose only hidden fields are digests of 256-bit
        random tokens or a seed chain's 256-bit secret. Not otherwise: an action's event id
        derives from its Idempotency-Key, which a client may have made guessable, and
        metadata is guessable too."""
        return isinstance(
            entry.event, GameCreated | SeatClaimed | SeedChainExtended
        ) or self.knows_whole(entry, viewer, as_of)

    def chain_for(self, hand: int) -> SeedChain | None:
        return next((chain for chain in self.chains if chain.covers(hand)), None)

    def over_by(self, as_of: int) -> bool:
        """Whether the game had ended by version `as_of`."""
        return 0 < self.ended_at <= as_of

    def redact(self, entry: Entry, viewer: Viewer, as_of: int) -> Any:
        """The event as `viewer` may see it, as of version `as_of`: the feed's one gate.
        A seed chain's secret reveals every server seed of the game still to come: nobody
        sees it before the game is over."""
        event = entry.event
        if isinstance(event, GameCreated):
            secret = event.seed_secret if self.over_by(as_of) else ""
            return msgspec.structs.replace(event, creator_hash="", seed_secret=secret)
        if isinstance(event, SeedChainExtended):
            return event if self.over_by(as_of) else msgspec.structs.replace(event, secret="")
        if isinstance(event, SeatClaimed):
            return msgspec.structs.replace(event, token_hash="")
        if isinstance(event, SeatSeedSet | SeatResigned | TurnPlayedFor | GameRematched):
            return event
        if isinstance(event, GameStarted) or self.decider is None:
            return event
        return self.decider.redact(event, viewer, self.hand_over(entry, as_of))
