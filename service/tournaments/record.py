"""A tournament as the command path holds it: its stream read whole (it is short: its
players and rounds, never the play) and folded, and who may ask what of it."""

from __future__ import annotations

import secrets
import uuid
from collections.abc import Callable, Sequence
from contextlib import nullcontext
from dataclasses import dataclass, field

from domain.tournament.state import Tournament, evolve
from events.codec import GENESIS_HASH
from events.schema.tournament import TournamentCreated
from events.store import AppendResult, ChainBroken, EventStore, NewEvent, RecordedEvent
from service.commands.command import Actor
from service.commands.keys import KeyUse, note_use
from service.contract.problems import ApiError
from service.ops.logging import log
from service.play.lobby import token_hash

PREFIX = "tournament:"


def stream_id(tournament_id: str) -> str:
    return f"{PREFIX}{tournament_id}"


@dataclass(slots=True)
class TournamentRecord:
    """A tournament's stream as read: the stored events and the state folded from them."""

    tournament_id: str
    state: Tournament = field(default_factory=Tournament)
    events: list[RecordedEvent] = field(default_factory=list)
    keys: dict[tuple[str, str], KeyUse] = field(default_factory=dict)

    @property
    def version(self) -> int:
        return len(self.events)

    def fold(self, item: RecordedEvent) -> None:
        self.state = evolve(self.state, item.data)
        self.events.append(item)
        note_use(self.keys, item.metadata, item.version)

    def is_organiser(self, token: str) -> bool:
        return secrets.compare_digest(self.state.config.organiser_hash, token_hash(token))

    def player_of(self, token: str) -> str | None:
        digest = token_hash(token)
        return next(
            (p.name for p in self.state.players if secrets.compare_digest(p.token_hash, digest)),
            None,
        )


class TournamentStreams:
    """The tournaments' kind of stream (service/commands/stream.py): read whole for every
    command, held by no lock (the expected version orders them)."""

    noun = "tournament"
    ids = uuid.UUID("0b6f6d7e-3c0a-4f55-9a63-5d1e2f7c4b90")

    def __init__(self, store: EventStore) -> None:
        self.store = store

    def stream_id(self, name: str) -> str:
        return stream_id(name)

    async def hold(self, tournament_id: str) -> HeldTournament:
        return HeldTournament(self, await self.read(tournament_id))

    async def begun(
        self, tournament_id: str, new: Sequence[NewEvent], result: AppendResult
    ) -> TournamentRecord:
        return await self.read(tournament_id)

    async def read(self, tournament_id: str) -> TournamentRecord:
        try:
            stored = await self.store.read_stream(stream_id(tournament_id), prev_hash=GENESIS_HASH)
        except ChainBroken as broken:
            log.error("chain_broken", tournament_id=tournament_id, version=broken.version)
            raise ApiError(
                500,
                "history_corrupt",
                f"the stored history of tournament {tournament_id} fails verification",
            ) from None
        if not stored or not isinstance(stored[0].data, TournamentCreated):
            raise ApiError(
                404, "tournament_not_found", f"no tournament has the id {tournament_id!r}"
            )
        record = TournamentRecord(tournament_id)
        for item in stored:
            record.fold(item)
        return record


@dataclass(slots=True)
class HeldTournament:
    streams: TournamentStreams
    record: TournamentRecord
    fresh: bool = True
    lock: nullcontext[None] = field(default_factory=nullcontext)

    async def refresh(self) -> None:
        self.record = await self.streams.read(self.record.tournament_id)

    async def appended(self, new: Sequence[NewEvent], result: AppendResult, read: bool) -> None:
        await self.refresh()


# ---- who asks ----------------------------------------------------------------------------

Authorize = Callable[[TournamentRecord], Actor]


def organiser(token: str) -> Authorize:
    def authorize(record: TournamentRecord) -> Actor:
        if record.is_organiser(token):
            return Actor("organiser")
        if record.player_of(token) is not None:
            raise ApiError(403, "not_organiser", "only the organiser may do this")
        raise ApiError(401, "invalid_token", "the token is not valid for this tournament")

    return authorize


def player(token: str, name: str, organiser_too: bool) -> Authorize:
    def authorize(record: TournamentRecord) -> Actor:
        if organiser_too and record.is_organiser(token):
            return Actor("organiser")
        held = record.player_of(token)
        if held is None and not record.is_organiser(token):
            raise ApiError(401, "invalid_token", "the token is not valid for this tournament")
        if held != name:
            if organiser_too:
                raise ApiError(403, "not_organiser", "only the organiser or the player may")
            raise ApiError(403, "not_this_player", f"the token is not {name!r}'s")
        return Actor(f"player:{name}")

    return authorize
