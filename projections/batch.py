"""A page of the feed as the runners of one projector fold it: looked through once for all.

Each runner of a projector folds the same pages (they share their reads, events/feed.py),
and each used to go through every event of a page itself: to list its streams, to check each
event's version, to pick out the events of the types it reads. A `Batch` does that once per
page for every runner of the projector (`Batches`): the streams of the page with the first
and last version of each, whether each stream's versions follow one another, and the events
of each set of types asked for. A runner whose generation stands just before each stream's
first version (the rule, while the runner keeps up with its generation) takes the page
whole, with no check per event (`follows`); any other (a redelivery, a gap, an unreadable
row) checks event by event as before (projections/runner.py).
"""

from __future__ import annotations

from collections import OrderedDict
from collections.abc import Mapping, Sequence

from events.store.base import Checkpoint, RecordedEvent
from events.store.unreadable import Unreadable


class Batch:
    __slots__ = ("_of", "events", "first", "last", "regular")

    def __init__(self, events: Sequence[RecordedEvent]) -> None:
        self.events = events
        first: dict[str, int] = {}
        last: dict[str, int] = {}
        regular = True
        for event in events:
            stream, version = event.stream_id, event.version
            before = last.get(stream)
            if before is None:
                first[stream] = version
            elif version != before + 1:
                regular = False  # the page skips or repeats a version of the stream
            last[stream] = version
            if type(event.data) is Unreadable:
                regular = False
        self.first = first
        """Each stream of the page (in the order of its first event) -> its first version."""
        self.last = last
        """Each stream of the page -> its last version: how far the page takes it."""
        self.regular = regular
        """Every stream's versions in the page follow one another, and every row is read."""
        self._of: dict[frozenset[type] | None, Sequence[RecordedEvent]] = {None: events}

    def follows(self, versions: Mapping[str, int]) -> bool:
        """Whether the page picks up each of its streams right after the version `versions`
        holds for it (0: none yet), with no version skipped or unreadable: then every event
        of the page is applied in turn, and none needs checking on its own."""
        if not self.regular:
            return False
        get = versions.get
        return all(get(stream, 0) + 1 == version for stream, version in self.first.items())

    def of(self, types: frozenset[type] | None) -> Sequence[RecordedEvent]:
        """The events of the page whose type is in `types` (None: every event), in order;
        picked out once for every runner that asks for the same types."""
        picked = self._of.get(types)
        if picked is None:
            assert types is not None
            picked = self._of[types] = [e for e in self.events if type(e.data) in types]
        return picked


class Batches:
    """The `Batch` of each page the runners of one projector read, made by the first to ask.

    A page is known by where it starts, how many events it holds and where it ends: two reads
    of the feed after one checkpoint that end at the same one hold the same events (the feed
    never gains an event before one it has shown). The last few are kept: runners that keep
    up with one another ask for the same ones."""

    def __init__(self, keep: int = 8) -> None:
        self._keep = keep
        self._kept: OrderedDict[tuple[Checkpoint, int, Checkpoint], Batch] = OrderedDict()

    def of(self, after: Checkpoint, page: Sequence[RecordedEvent]) -> Batch:
        if not page:
            return Batch(page)
        key = (after, len(page), page[-1].checkpoint)
        batch = self._kept.get(key)
        if batch is None:
            batch = self._kept[key] = Batch(page)
            while len(self._kept) > self._keep:
                self._kept.popitem(last=False)
        return batch

    def forget(self) -> None:
        """Drop the pages kept (the feed is another store's, or went back)."""
        self._kept.clear()
