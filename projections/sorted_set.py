"""A sorted set for the in-memory projection store: member -> score, read in (score, member)
order, as a Redis sorted set is read.

The entries are kept in sorted chunks of at most `2 * LOAD`, each found by bisecting the
chunks' last entries. A change costs a bisect and a shift inside one chunk, whatever the
set's size. In one flat sorted list a change shifted every entry behind it: a long-running
embedded lobby holds every game ever opened, and at a million members a change cost a third of a
millisecond against 9 µs now (docs/BENCHMARKS.md, "The in-memory index in chunks"). A read
copies its page from the first entry of its range, chunk by chunk.
"""

from __future__ import annotations

from bisect import bisect_left, bisect_right, insort
from collections.abc import Iterator

Entry = tuple[float, str]

LOAD = 512
"""Entries a chunk holds before it is split in two halves of `LOAD`: large enough that the
chunks' own list stays short (about 2,000 at a million members), small enough that a shift
inside one is a few hundred pointers."""


class SortedSet:
    def __init__(self) -> None:
        self.scores: dict[str, float] = {}
        self._chunks: list[list[Entry]] = []
        self._lasts: list[Entry] = []
        """Each chunk's last (greatest) entry, in order: where an entry belongs is a bisect."""

    def __len__(self) -> int:
        return len(self.scores)

    def __iter__(self) -> Iterator[Entry]:
        for chunk in self._chunks:
            yield from chunk

    def add(self, member: str, score: float) -> None:
        """Set `member`'s score (added, or moved to its new place)."""
        self.remove(member)
        self.scores[member] = score
        entry = (score, member)
        if not self._chunks:
            self._chunks.append([entry])
            self._lasts.append(entry)
            return
        at = min(bisect_left(self._lasts, entry), len(self._chunks) - 1)
        chunk = self._chunks[at]
        insort(chunk, entry)
        if len(chunk) > 2 * LOAD:
            self._chunks.insert(at + 1, chunk[LOAD:])
            self._lasts.insert(at + 1, chunk[-1])
            del chunk[LOAD:]
        self._lasts[at] = chunk[-1]

    def remove(self, member: str) -> None:
        old = self.scores.pop(member, None)
        if old is None:
            return
        entry = (old, member)
        at = bisect_left(self._lasts, entry)
        chunk = self._chunks[at]
        del chunk[bisect_left(chunk, entry)]
        if chunk:
            self._lasts[at] = chunk[-1]
        else:
            del self._chunks[at]
            del self._lasts[at]

    def upward(self, start: Entry, *, after: bool, stop: Entry, limit: int) -> list[Entry]:
        """Up to `limit` entries from `start` on (strictly after it when `after`) and not past
        `stop`, in order."""
        find = bisect_right if after else bisect_left
        chunks = self._chunks
        out: list[Entry] = []
        at = find(self._lasts, start)
        i = find(chunks[at], start) if at < len(chunks) else 0
        while at < len(chunks) and len(out) < limit:
            out.extend(chunks[at][i : i + limit - len(out)])
            at, i = at + 1, 0
        if out and out[-1] > stop:
            del out[bisect_right(out, stop) :]
        return out

    def downward(self, start: Entry, *, before: bool, stop: Entry, limit: int) -> list[Entry]:
        """Up to `limit` entries from `start` down (strictly before it when `before`) and not
        below `stop`, last first."""
        find = bisect_left if before else bisect_right
        chunks = self._chunks
        out: list[Entry] = []
        at = min(find(self._lasts, start), len(chunks) - 1)
        i = find(chunks[at], start) if at >= 0 else 0
        while at >= 0 and len(out) < limit:
            out.extend(reversed(chunks[at][max(0, i - limit + len(out)) : i]))
            at -= 1
            if at >= 0:
                i = len(chunks[at])
        while out and out[-1] < stop:
            out.pop()
        return out
