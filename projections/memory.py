"""The in-memory projection store: the embedded default, inside `fairway serve`.

It keeps the same generations, alias and atomic batches as the Redis store (a batch is
applied between two awaits, so nothing interleaves with it) and passes the same tests.
Documents are kept as encoded JSON, as Redis keeps them, so a reader can never change a
stored document through what it was handed.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import msgspec

from events.store.base import Checkpoint
from projections.base import Doc, IndexEntry, IndexPage, ProjectionsUnavailable
from projections.paging import decode_cursor, encode_cursor
from projections.sorted_set import SortedSet
from projections.store import Changes, Generation, Outcome, ProjectionStore, Snapshot, State

_encode = msgspec.json.encode
_decode = msgspec.json.decode


@dataclass
class _Space:
    meta: Generation
    docs: dict[str, bytes] = field(default_factory=dict)
    counters: dict[str, dict[str, int]] = field(default_factory=dict)
    indexes: dict[str, SortedSet] = field(default_factory=dict)
    versions: dict[str, int] = field(default_factory=dict)


class MemoryProjectionStore(ProjectionStore):
    def __init__(self) -> None:
        self._spaces: dict[tuple[str, int], _Space] = {}
        self._aliases: dict[str, int] = {}
        self._counters: dict[str, int] = {}
        self._rebuilds: dict[str, dict[str, int]] = {}
        self.closed = False

    def _check(self) -> None:
        if self.closed:
            raise ProjectionsUnavailable("the projection store is closed")

    # ---- generations ------------------------------------------------------------------------

    async def alias(self, name: str) -> int | None:
        self._check()
        return self._aliases.get(name)

    async def begin(self, name: str, version: int, source: str = "") -> Generation:
        self._check()
        number = max(self._counters.get(name, 0), self._aliases.get(name, 0)) + 1
        self._counters[name] = number
        meta = Generation(name, number, version, source=source)
        self._spaces[(name, number)] = _Space(meta)
        return meta

    async def generation(self, name: str, number: int) -> Generation | None:
        self._check()
        space = self._spaces.get((name, number))
        return None if space is None else space.meta

    async def mark(self, name: str, number: int, state: State, error: str = "") -> None:
        self._check()
        space = self._spaces.get((name, number))
        if space is not None:
            space.meta = msgspec.structs.replace(space.meta, state=state, error=error)

    async def switch(self, name: str, number: int, expected: int | None) -> bool:
        self._check()
        if self._aliases.get(name) != expected:
            return False
        self._aliases[name] = number
        return True

    async def drop(self, name: str, number: int) -> None:
        self._check()
        self._spaces.pop((name, number), None)

    async def newest(self, name: str) -> int | None:
        self._check()
        return self._counters.get(name)

    async def generations(self, name: str) -> list[int]:
        self._check()
        return sorted(number for (owner, number) in self._spaces if owner == name)

    def flush(self) -> None:
        """Forget everything, as a flushed Redis would (tests)."""
        self._spaces.clear()
        self._aliases.clear()
        self._counters.clear()
        self._rebuilds.clear()

    # ---- batches ----------------------------------------------------------------------------

    async def snapshot(
        self, name: str, number: int, keys: Sequence[str], streams: Sequence[str]
    ) -> Snapshot | None:
        self._check()
        space = self._spaces.get((name, number))
        if space is None:
            return None
        docs = {key: _load(space.docs.get(key)) for key in keys}
        versions = {stream: space.versions.get(stream, 0) for stream in streams}
        return Snapshot(space.meta.checkpoint, docs, versions)

    async def commit(
        self, name: str, number: int, start: Checkpoint, end: Checkpoint, changes: Changes
    ) -> Outcome:
        self._check()
        space = self._spaces.get((name, number))
        if space is None:
            return Outcome.GONE
        if space.meta.checkpoint != start:
            return Outcome.MOVED
        for key, doc in changes.docs.items():
            if doc is None:
                space.docs.pop(key, None)
            else:
                space.docs[key] = _encode(doc)
        for key, (reset, sums) in changes.counters.items():
            counter = {} if reset else space.counters.get(key, {})
            for name_, amount in sums.items():
                counter[name_] = counter.get(name_, 0) + amount
            if counter:
                space.counters[key] = counter
            else:
                space.counters.pop(key, None)
        for (index, member), score in changes.index.items():
            if score is None:
                if index in space.indexes:
                    space.indexes[index].remove(member)
                    if not space.indexes[index].scores:
                        del space.indexes[index]
            else:
                space.indexes.setdefault(index, SortedSet()).add(member, score)
        space.versions.update(changes.versions)
        space.meta = msgspec.structs.replace(space.meta, checkpoint=end)
        return Outcome.COMMITTED

    # ---- reading ----------------------------------------------------------------------------

    def _live(self, projection: str) -> _Space:
        self._check()
        number = self._aliases.get(projection)
        space = None if number is None else self._spaces.get((projection, number))
        if space is None:
            raise ProjectionsUnavailable(f"the {projection} projection is not built yet")
        return space

    async def get(self, projection: str, key: str) -> Doc | None:
        return _load(self._live(projection).docs.get(key))

    async def get_many(self, projection: str, keys: Sequence[str]) -> list[Doc | None]:
        docs = self._live(projection).docs
        return [_load(docs.get(key)) for key in keys]

    async def counters(self, projection: str, key: str) -> dict[str, int]:
        return dict(self._live(projection).counters.get(key, {}))

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
        found = self._live(projection).indexes.get(index)
        if found is None:
            return IndexPage([], None)
        low, high = (min_score, ""), (max_score, "\U0010ffff\U0010ffff")
        mark = None if position is None else (position.score, position.member)
        # from the range's first entry, or from strictly past the cursor's if that is inside
        if descending:
            past = mark is not None and mark <= high
            start = mark if past and mark is not None else high
            span = found.downward(start, before=past, stop=low, limit=limit + 1)
        else:
            past = mark is not None and mark >= low
            start = mark if past and mark is not None else low
            span = found.upward(start, after=past, stop=high, limit=limit + 1)
        entries = [IndexEntry(member, score) for score, member in span[:limit]]
        more = len(span) > limit
        return IndexPage(entries, encode_cursor(entries[-1]) if more else None)

    async def dump(self, name: str, number: int) -> Mapping[str, object]:
        self._check()
        space = self._spaces.get((name, number))
        if space is None:
            return {}
        out: dict[str, Any] = {f"k:{key}": _load(raw) for key, raw in space.docs.items()}
        out.update({f"k:{key}": dict(c) for key, c in space.counters.items()})
        out.update({f"i:{name_}": [(m, s) for s, m in idx] for name_, idx in space.indexes.items()})
        out["streams"] = dict(space.versions)
        return out

    async def count_rebuild(self, name: str, reason: str) -> None:
        self._check()
        counts = self._rebuilds.setdefault(name, {})
        counts[reason] = counts.get(reason, 0) + 1

    async def rebuilds(self, name: str) -> dict[str, int]:
        self._check()
        return dict(self._rebuilds.get(name, {}))

    async def close(self) -> None:
        self.closed = True


def _load(raw: bytes | None) -> Doc | None:
    return None if raw is None else _decode(raw)
