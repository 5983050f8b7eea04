"""The Redis projection store.

Keys, under a prefix (`FAIRWAY_REDIS_PREFIX`, default `fw`):

    fw:alias:<name>                 the generation readers use
    fw:gen:<name>                   the last generation number handed out
    fw:rebuilds:<name>              hash: reason -> rebuilds switched in
    {fw:<name>:g<n>}:meta           hash: version, tx, pos (the checkpoint), state, error,
                                    source (the event store's installation id)
    {fw:<name>:g<n>}:streams        hash: stream id -> last version applied
    {fw:<name>:g<n>}:k:<key>        a document (JSON string) or a counter hash
    {fw:<name>:g<n>}:i:<index>      a sorted set

A generation's keys share one hash tag, so Redis Cluster keeps them in one slot and one Lua
script applies a batch and moves the checkpoint atomically, after checking the checkpoint is
still where the batch started; a snapshot's MULTI and a read's pipeline stay in that slot
too. The other keys are each used alone. With `redis+cluster://` the store runs on a Redis
Cluster (tests/integration/projections/test_redis_cluster.py starts one and proves it).
Readers resolve the alias and remember it for `ALIAS_TTL` seconds; a rebuild waits longer
than that before dropping the old generation.
Every Redis error leaves this module as `ProjectionsUnavailable`.
"""

from __future__ import annotations

import time
from collections.abc import AsyncIterator, Callable, Mapping, Sequence
from contextlib import asynccontextmanager
from typing import Any

import msgspec

from events.store.base import Checkpoint
from projections.base import Doc, IndexEntry, IndexPage, ProjectionsUnavailable
from projections.paging import after, decode_cursor, encode_cursor
from projections.redis_client import REDIS_ERRORS, redis_client
from projections.redis_scripts import COMMIT, MARK, SWITCH
from projections.store import Changes, Generation, Outcome, ProjectionStore, Snapshot, State

ALIAS_TTL = 1.0
"""Seconds a reader trusts the alias it resolved."""
DROP_BATCH = 500

_OUTCOMES = {1: Outcome.COMMITTED, 0: Outcome.MOVED, -1: Outcome.GONE}
_encode = msgspec.json.encode
_decode = msgspec.json.decode


class RedisProjectionStore(ProjectionStore):
    def __init__(self, client: Any, prefix: str = "fw") -> None:
        # Typed loosely: a `Redis` or a `RedisCluster` (projections/redis_client.py), and
        # redis-py's stubs cannot know the client returns bytes.
        self._redis: Any = client
        self._prefix = prefix
        self._commit = client.register_script(COMMIT)
        self._switch = client.register_script(SWITCH)
        self._mark = client.register_script(MARK)  # never recreates a dropped generation
        self._aliases: dict[str, tuple[int, float]] = {}

    @classmethod
    def from_url(cls, url: str, prefix: str = "fw", timeout: float = 1.0) -> RedisProjectionStore:
        """A store on `url` (one Redis, or a cluster: `redis+cluster://`); each Redis call
        gives up after `timeout` seconds (then `ProjectionsUnavailable`), so a silent Redis
        holds no request for long."""
        return cls(redis_client(url, timeout), prefix)

    # ---- key names --------------------------------------------------------------------------

    def _tag(self, name: str, number: int) -> str:
        return f"{{{self._prefix}:{name}:g{number}}}"

    def _alias_key(self, name: str) -> str:
        return f"{self._prefix}:alias:{name}"

    def _meta(self, name: str, number: int) -> str:
        return f"{self._tag(name, number)}:meta"

    def _streams(self, name: str, number: int) -> str:
        return f"{self._tag(name, number)}:streams"

    def _key(self, name: str, number: int, key: str) -> str:
        return f"{self._tag(name, number)}:k:{key}"

    def _index(self, name: str, number: int, index: str) -> str:
        return f"{self._tag(name, number)}:i:{index}"

    # ---- generations ------------------------------------------------------------------------

    async def alias(self, name: str) -> int | None:
        async with _unavailable():
            raw = await self._redis.get(self._alias_key(name))
        return None if raw is None else int(raw)

    async def begin(self, name: str, version: int, source: str = "") -> Generation:
        counter = f"{self._prefix}:gen:{name}"
        async with _unavailable():
            number = int(await self._redis.incr(counter))
            current = await self.alias(name)
            if current is not None and number <= current:  # the counter was lost, not the alias
                number = int(await self._redis.incrby(counter, current + 1 - number))
            meta = Generation(name, number, version, source=source)
            await self._redis.hset(self._meta(name, number), mapping=_meta_fields(meta))
        return meta

    async def generation(self, name: str, number: int) -> Generation | None:
        async with _unavailable():
            fields = await self._redis.hgetall(self._meta(name, number))
        return _generation(name, number, fields)

    async def mark(self, name: str, number: int, state: State, error: str = "") -> None:
        async with _unavailable():
            await self._mark(keys=[self._meta(name, number)], args=[state, error])

    async def switch(self, name: str, number: int, expected: int | None) -> bool:
        async with _unavailable():
            expected_text = "" if expected is None else str(expected)
            done = await self._switch(keys=[self._alias_key(name)], args=[expected_text, number])
        self._aliases.pop(name, None)
        return bool(done)

    async def drop(self, name: str, number: int) -> None:
        async with _unavailable():
            await self._redis.delete(self._meta(name, number))
            batch: list[bytes] = []
            async for key in self._redis.scan_iter(match=f"{self._tag(name, number)}*", count=1000):
                batch.append(key)
                if len(batch) >= DROP_BATCH:
                    await self._redis.unlink(*batch)
                    batch = []
            if batch:
                await self._redis.unlink(*batch)

    async def newest(self, name: str) -> int | None:
        async with _unavailable():
            raw = await self._redis.get(f"{self._prefix}:gen:{name}")
        return None if raw is None else int(raw)

    async def generations(self, name: str) -> list[int]:
        found = []
        pattern = f"{{{self._prefix}:{name}:g*}}:meta"
        async with _unavailable():
            async for key in self._redis.scan_iter(match=pattern, count=1000):
                tag = key.decode().split("}", 1)[0]
                found.append(int(tag.rsplit(":g", 1)[1]))
        return sorted(found)

    # ---- batches ----------------------------------------------------------------------------

    async def snapshot(
        self, name: str, number: int, keys: Sequence[str], streams: Sequence[str]
    ) -> Snapshot | None:
        async with _unavailable(), self._redis.pipeline(transaction=True) as pipe:
            pipe.hmget(self._meta(name, number), ["tx", "pos"])
            if streams:
                pipe.hmget(self._streams(name, number), list(streams))
            if keys:
                _mget(pipe, [self._key(name, number, key) for key in keys])
            results = await pipe.execute()
        tx, pos = results[0]
        if tx is None or pos is None:
            return None
        versions = (
            dict(zip(streams, (int(v or 0) for v in results[1]), strict=True)) if streams else {}
        )
        raws = results[-1] if keys else []
        docs = {
            key: None if raw is None else _decode(raw) for key, raw in zip(keys, raws, strict=True)
        }
        return Snapshot(Checkpoint(int(tx), int(pos)), docs, versions)

    async def commit(
        self, name: str, number: int, start: Checkpoint, end: Checkpoint, changes: Changes
    ) -> Outcome:
        keys = [self._meta(name, number), self._streams(name, number)]
        slots: dict[str, int] = {}

        def slot(full: str) -> int:
            found = slots.get(full)
            if found is None:
                keys.append(full)
                found = slots[full] = len(keys)  # Lua counts from 1
            return found

        versions: list[str] = []
        for stream, version in changes.versions.items():
            versions += (stream, str(version))
        ops: list[tuple[object, ...]] = []
        args: list[bytes] = [b""]  # ARGV[1], the payload, goes in last
        for key, doc in changes.docs.items():
            at = slot(self._key(name, number, key))
            if doc is None:
                ops.append(("D", at))
            else:
                args.append(_encode(doc))
                ops.append(("S", at, len(args)))  # its index in ARGV (Lua counts from 1)
        for key, (reset, sums) in changes.counters.items():
            at = slot(self._key(name, number, key))
            if reset:
                ops.append(("D", at))
            ops += [("H", at, field_, str(amount)) for field_, amount in sums.items()]
        for (index, member), score in changes.index.items():
            at = slot(self._index(name, number, index))
            ops.append(("R", at, member) if score is None else ("A", at, repr(score), member))
        args[0] = _encode(
            [
                str(start.tx_id),
                str(start.position),
                str(end.tx_id),
                str(end.position),
                versions,
                ops,
            ]
        )
        async with _unavailable():
            result = await self._commit(keys=keys, args=args)
        return _OUTCOMES[int(result)]

    # ---- reading ----------------------------------------------------------------------------

    async def _live(self, projection: str) -> int:
        cached = self._aliases.get(projection)
        now = time.monotonic()
        if cached is not None and cached[1] > now:
            return cached[0]
        number = await self.alias(projection)
        if number is None:
            raise ProjectionsUnavailable(f"the {projection} projection is not built yet")
        self._aliases[projection] = (number, now + ALIAS_TTL)
        return number

    async def _read(self, projection: str, commands: Callable[[Any, int], None]) -> list[Any]:
        """Run `commands(pipeline, generation)` on the live generation, in one round trip
        with a check that the generation still exists: a reader never takes a flushed or
        dropped generation's silence for an empty read model (it resolves the alias again,
        and while none is live, `ProjectionsUnavailable`)."""
        for _ in range(2):
            number = await self._live(projection)
            async with _unavailable(), self._redis.pipeline(transaction=False) as pipe:
                pipe.exists(self._meta(projection, number))
                commands(pipe, number)
                exists, *results = await pipe.execute()
            if exists:
                return list(results)
            self._aliases.pop(projection, None)
        raise ProjectionsUnavailable(f"the {projection} projection is being rebuilt")

    async def get(self, projection: str, key: str) -> Doc | None:
        [raw] = await self._read(projection, lambda p, n: p.get(self._key(projection, n, key)))
        return None if raw is None else _decode(raw)

    async def get_many(self, projection: str, keys: Sequence[str]) -> list[Doc | None]:
        if not keys:
            return []
        [raws] = await self._read(
            projection, lambda p, n: _mget(p, [self._key(projection, n, key) for key in keys])
        )
        return [None if raw is None else _decode(raw) for raw in raws]

    async def counters(self, projection: str, key: str) -> dict[str, int]:
        [fields] = await self._read(
            projection, lambda p, n: p.hgetall(self._key(projection, n, key))
        )
        return {f.decode(): int(v) for f, v in fields.items()}

    async def page(
        self,
        projection: str,
        index: str,
        *,
        limit: int,
        cursor: str | None = None,
        min_score: float = float("-inf"),
        max_score: float = float("inf"),
        descending: bool = False,
    ) -> IndexPage:
        position = None if cursor is None else decode_cursor(cursor)
        low, high = min_score, max_score
        if position is not None:  # start at the cursor's score; equal scores are sifted below
            if descending:
                high = min(high, position.score)
            else:
                low = max(low, position.score)
        start, stop = (high, low) if descending else (low, high)
        entries: list[IndexEntry] = []
        offset, want = 0, limit + 1
        chunk = want + 16
        found: list[int] = []

        def first(pipe: Any, number: int) -> None:
            found[:] = [number]
            pipe.zrange(
                self._index(projection, number, index), start, stop, desc=descending,
                withscores=True, byscore=True, offset=0, num=chunk,
            )  # fmt: skip

        [rows] = await self._read(projection, first)
        while True:
            offset += len(rows)
            for member, score in rows:
                entry = IndexEntry(member.decode(), float(score))
                if position is None or after(entry, position, descending):
                    entries.append(entry)
            if len(rows) < chunk or len(entries) >= want:
                break
            chunk = want - len(entries) + 16  # many entries tied at the cursor's score
            async with _unavailable():
                rows = await self._redis.zrange(
                    self._index(projection, found[0], index), start, stop, desc=descending,
                    withscores=True, byscore=True, offset=offset, num=chunk,
                )  # fmt: skip
        more = len(entries) > limit
        entries = entries[:limit]
        return IndexPage(entries, encode_cursor(entries[-1]) if more else None)

    async def dump(self, name: str, number: int) -> Mapping[str, object]:
        tag = self._tag(name, number)
        out: dict[str, object] = {}
        async with _unavailable():
            async for raw_key in self._redis.scan_iter(match=f"{tag}*", count=1000):
                full = raw_key.decode()
                relative = full[len(tag) + 1 :]
                kind = (await self._redis.type(full)).decode()
                if relative == "meta":
                    continue
                if kind == "string":
                    out[relative] = _decode(await self._redis.get(full))
                elif kind == "hash":
                    fields = await self._redis.hgetall(full)
                    out[relative] = {f.decode(): int(v) for f, v in fields.items()}
                elif kind == "zset":
                    rows = await self._redis.zrange(full, 0, -1, withscores=True)
                    out[relative] = [(m.decode(), float(s)) for m, s in rows]
        return out

    async def count_rebuild(self, name: str, reason: str) -> None:
        async with _unavailable():
            await self._redis.hincrby(f"{self._prefix}:rebuilds:{name}", reason, 1)

    async def rebuilds(self, name: str) -> dict[str, int]:
        async with _unavailable():
            fields = await self._redis.hgetall(f"{self._prefix}:rebuilds:{name}")
        return {reason.decode(): int(count) for reason, count in fields.items()}

    async def close(self) -> None:
        await self._redis.aclose()


@asynccontextmanager
async def _unavailable() -> AsyncIterator[None]:
    try:
        yield
    except REDIS_ERRORS as error:
        raise ProjectionsUnavailable(f"Redis: {error}") from None


def _mget(pipe: Any, keys: list[str]) -> None:
    """MGET in a pipeline. Sent as a raw command: redis-py's cluster pipeline refuses its
    `mget` outright, lest the keys span slots; these are one generation's, in one slot,
    which the cluster itself checks (a CROSSSLOT error otherwise)."""
    pipe.execute_command("MGET", *keys)


def _meta_fields(meta: Generation) -> dict[str, str | int]:
    return {
        "name": meta.name,
        "number": meta.number,
        "version": meta.version,
        "tx": meta.checkpoint.tx_id,
        "pos": meta.checkpoint.position,
        "state": meta.state,
        "error": meta.error,
        "source": meta.source,
    }


def _generation(name: str, number: int, fields: Mapping[bytes, bytes]) -> Generation | None:
    if b"tx" not in fields or b"pos" not in fields:
        return None
    text = {k.decode(): v.decode() for k, v in fields.items()}
    state = text.get("state", "running")
    return Generation(
        name,
        number,
        int(text.get("version", "0")),
        Checkpoint(int(text["tx"]), int(text["pos"])),
        state if state in ("rebuilding", "running", "failed") else "failed",  # type: ignore[arg-type]
        text.get("error", ""),
        text.get("source", ""),
    )
