"""A projector in a few lines over plain dicts: what the read-model tests run the pure
projections with, before and beside the real runner and stores (projections/runner.py).

It keeps the runner's rules: `prepare` once per batch, each stream's events in version order
(a redelivered one is skipped, a gap is an error), `apply` sees every earlier write, and the
docs `more_keys` names besides those of `keys`.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

import msgspec

from events.store.base import RecordedEvent
from projections.base import Delete, Doc, Incr, IndexAdd, IndexRemove, Put, Write


@dataclass
class DictModel:
    docs: dict[str, Doc] = field(default_factory=dict)
    counters: dict[str, dict[str, int]] = field(default_factory=dict)
    indexes: dict[str, dict[str, float]] = field(default_factory=dict)
    versions: dict[str, int] = field(default_factory=dict)

    def write(self, write: Write) -> None:
        match write:
            case Put(key, doc):
                # what a store keeps is JSON: tuples come back as lists
                self.docs[key] = msgspec.json.decode(msgspec.json.encode(doc))
            case Delete(key):
                self.docs.pop(key, None)
                self.counters.pop(key, None)
            case Incr(key, name, amount):
                hash_ = self.counters.setdefault(key, {})
                hash_[name] = hash_.get(name, 0) + amount
            case IndexAdd(index, member, score):
                self.indexes.setdefault(index, {})[member] = score
            case IndexRemove(index, member):
                self.indexes.get(index, {}).pop(member, None)
                if not self.indexes.get(index, True):
                    del self.indexes[index]


async def project(
    projection: Any,
    feed: Sequence[RecordedEvent],
    batch: int = 200,
    model: DictModel | None = None,
    after_batch: Callable[[int, DictModel], None] | None = None,
) -> DictModel:
    """Run `projection` over `feed` in batches; `after_batch(events so far, model)` is
    called after each, for tests that check what a reader could see at any moment."""
    model = model or DictModel()
    for start in range(0, len(feed), batch):
        events = feed[start : start + batch]
        prepare = getattr(projection, "prepare", None)
        if prepare is not None:
            await prepare(events)
        more = getattr(projection, "more_keys", None)
        for event in events:
            seen = model.versions.get(event.stream_id, 0)
            if event.version <= seen:
                continue
            if event.version != seen + 1:
                raise AssertionError(f"{event.stream_id}: v{event.version} after v{seen}")
            docs = {key: model.docs.get(key) for key in projection.keys(event)}
            if more is not None and docs:
                docs |= {key: model.docs.get(key) for key in more(event, docs)}
            for write in projection.apply(event, docs):
                model.write(write)
            model.versions[event.stream_id] = event.version
        if after_batch is not None:
            after_batch(start + len(events), model)
    return model
