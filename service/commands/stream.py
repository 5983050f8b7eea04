"""What a stream kind (a game, a tournament) gives the command handler: its records, held
for one command, and how a record catches up with the store and takes in an append.

The handler reads nothing else of a record than its version and the keys used in it, so
one handler serves every kind; how a kind keeps its records (a game's cached slot with its
lock, a tournament's short stream read again) is the kind's own affair.
"""

from __future__ import annotations

import uuid
from collections.abc import Mapping, Sequence
from contextlib import AbstractAsyncContextManager
from typing import Any, Protocol, TypeVar

from events.store import AppendResult, NewEvent
from service.commands.keys import KeyUse


class Record(Protocol):
    """A stream as folded: its version and the Idempotency-Keys used in it."""

    @property
    def version(self) -> int: ...

    @property
    def keys(self) -> Mapping[tuple[str, str], KeyUse]: ...


R = TypeVar("R", bound=Record)
R_co = TypeVar("R_co", bound=Record, covariant=True)


class Held(Protocol[R_co]):
    """One stream's record as a command holds it."""

    @property
    def record(self) -> R_co: ...

    @property
    def lock(self) -> AbstractAsyncContextManager[Any]:
        """Orders this process's commands on the stream (correctness never rests on it:
        the expected version does)."""
        ...

    @property
    def fresh(self) -> bool:
        """Whether the record was read from the store for this command (else it is as
        this process kept it, and may be behind)."""
        ...

    async def refresh(self) -> None:
        """Catch the record up with the store."""

    async def appended(self, new: Sequence[NewEvent], result: AppendResult, read: bool) -> None:
        """Take in what this command appended: as decided, or `read` back from the store
        (where a retry may find what an earlier attempt stored)."""


class Stream(Protocol[R_co]):
    """A kind of stream: how its records are named, held and begun."""

    noun: str
    """What the stream is, in the problems a command answers with (`game`)."""
    ids: uuid.UUID
    """The namespace of the event ids a command derives (they must never change: a
    retried request finds its events by them)."""

    def stream_id(self, name: str) -> str: ...

    async def hold(self, name: str) -> Held[R_co]:
        """The record of stream `name` (a 404 problem when there is none)."""
        ...

    async def begun(self, name: str, new: Sequence[NewEvent], result: AppendResult) -> R_co:
        """The record of a stream this process has just created with `new`."""
        ...


async def load(stream: Stream[R_co], name: str) -> R_co:
    """The record of stream `name`, caught up with the store."""
    held = await stream.hold(name)
    if not held.fresh:
        await held.refresh()
    return held.record
