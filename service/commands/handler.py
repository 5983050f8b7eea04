"""The one command path, for every stream kind: hold the stream's record, ask who may,
replay a used key, check the expected version, decide, append at the version decided on,
and on a conflict catch up and decide again, a bounded number of times.

Correctness never depends on this process: a record kept here is only a head start, every
append names the version it was decided against, and the store refuses it if the stream
has moved. A key derives the append's event ids, so a retry (from the client, or of an
append whose answer was lost) lands on the events stored first.
"""

from __future__ import annotations

from collections.abc import Awaitable, Sequence
from typing import Any

from domain.errors import RuleViolation
from events.store import ConcurrencyError, EventIdConflict, EventStore, NewEvent
from service.commands.command import Actor, Command, Decision, NothingToDo, Outcome
from service.commands.keys import Key, KeyUse, creation_id, event_ids, key_digest
from service.commands.stream import R, Stream, load
from service.contract.problems import ApiError
from service.ops.metrics import Metrics

REFUSALS = (ApiError, RuleViolation, NothingToDo)
CONFLICTS = (ConcurrencyError, EventIdConflict)


class StaleVersion(ApiError):
    """If-Match (or the version a command was meant for) is no longer the stream's."""

    def __init__(self, noun: str, expected: int, version: int) -> None:
        detail = f"If-Match {expected} but the {noun} is at version {version}"
        super().__init__(409, "stale_version", detail)


class Conflict(ApiError):
    """Every attempt met another writer's append."""

    def __init__(self, noun: str) -> None:
        super().__init__(409, "conflict", f"the {noun} changed concurrently too often; retry")


def key_reused(what: str = "request") -> ApiError:
    return ApiError(
        422, "idempotency_key_reused", f"this Idempotency-Key was used for another {what}"
    )


class Handler:
    def __init__(self, store: EventStore, metrics: Metrics, retries: int = 5) -> None:
        self.store = store
        self.metrics = metrics
        self.retries = retries

    async def run(
        self,
        stream: Stream[R],
        name: str,
        command: Command[R],
        key: Key | None = None,
        *,
        expected: int | None = None,
        id_base: str | None = None,
        once: bool = False,
    ) -> Outcome[R]:
        """Decide and append `command` on stream `name`.

        The first attempt may trust the record as this process keeps it; a refusal or a
        conflict on it is never final: the record catches up with the store and the command
        is decided again, so a stale instance never refuses what the stream allows. With a
        key the record catches up first: a retried request must see its first answer.

        `expected` (If-Match) is the version the caller decided on: 409 `stale_version`
        once the stream has moved. Without a key the event ids derive from `id_base`, or are
        random. `once`: decided once, on the record caught up, never retried; for a command
        that the expected version decides between instances (a turn played for a seat: a
        conflict means another instance played it)."""
        held = await stream.hold(name)
        async with held.lock:
            fresh, trust = held.fresh, key is None and not once
            for _ in range(1 if once else self.retries):
                if not (fresh or trust):
                    await held.refresh()
                    fresh = True
                record = held.record
                try:
                    actor = command.authorize(record)
                    if key is not None and (used := record.keys.get((actor.scope, key.value))):
                        return self._replay(record, actor, key, used)
                    if expected is not None and expected != record.version:
                        raise StaleVersion(stream.noun, expected, record.version)
                    decision = await _decided(command.decide(record, actor))
                except REFUSALS:
                    if fresh:
                        raise
                    trust = False
                    continue
                new = _new_events(stream, name, actor, decision, key, id_base)
                try:
                    result = await self.store.append(stream.stream_id(name), record.version, new)
                except CONFLICTS:
                    self.metrics.count("append_conflicts")
                    fresh = trust = False
                    continue
                await held.appended(new, result, read=key is not None)
                self.metrics.count("commands")
                first, last = result.first_version, result.last_version
                return Outcome(held.record, first, last, actor, answer=decision.answer)
        raise Conflict(stream.noun)

    def _replay(self, record: R, actor: Actor, key: Key, used: KeyUse) -> Outcome[R]:
        if used.request_hash != key.request_hash:
            raise key_reused()
        self.metrics.count("idempotent_replays")
        return Outcome(record, used.first_version, used.last_version, actor, replayed=True)

    async def create(
        self,
        stream: Stream[R],
        name: str,
        events: Sequence[Any],
        *,
        key: str | None = None,
        id_base: str | None = None,
    ) -> tuple[R, bool]:
        """Begin stream `name` with `events`: its record, and whether it holds these very
        events (appended now, or by an identical attempt before).

        With a key (the first event's id as `creation_id`) or `id_base`, the event ids derive from
        the request, so a retried or raced create finds the stream made first; when it holds
        other events, the caller tells whether they answer its request (a retried create
        draws a new seed chain, say)."""
        if key is not None:  # the first event's id as it always was; any others after it
            ids = [creation_id(stream.ids, key)]
            ids += event_ids(stream.ids, len(events) - 1, f"create|{key_digest(key)}")
        else:
            ids = event_ids(stream.ids, len(events), id_base)
        new = [NewEvent(event_id=i, event=e) for i, e in zip(ids, events, strict=True)]
        try:
            result = await self.store.append(stream.stream_id(name), 0, new)
        except CONFLICTS:
            self.metrics.count("append_conflicts")
            return await load(stream, name), False
        return await stream.begun(name, new, result), True


def _new_events(
    stream: Stream[R],
    name: str,
    actor: Actor,
    decision: Decision,
    key: Key | None,
    id_base: str | None,
) -> list[NewEvent]:
    """The decided events as appended: with a key, their ids derive from it (and their
    metadata records it); else from `id_base`, or by chance."""
    metadata = dict(decision.metadata)
    if key is not None:
        metadata |= key.metadata(actor.scope)
        id_base = f"{name}|{actor.scope}|{key.value}"
    ids = event_ids(stream.ids, len(decision.events), id_base)
    return [
        NewEvent(event_id=i, event=e, metadata=metadata)
        for i, e in zip(ids, decision.events, strict=True)
    ]


async def _decided(decided: Decision | Awaitable[Decision]) -> Decision:
    return decided if isinstance(decided, Decision) else await decided
