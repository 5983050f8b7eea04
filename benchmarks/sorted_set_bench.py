"""The in-memory store's sorted set (projections/sorted_set.py) against the one flat sorted
list it replaced, at growing sizes: the cost of a change (a member moved to a new score, as
a lobby entry moves when its game changes) and of a read of a page of 50 from the middle.

    .venv/bin/python benchmarks/sorted_set_bench.py [--sizes 1000,10000,100000,1000000]

Both structures are timed in the same run, size by size, in alternating rounds, and the
ratio is printed beside the figures: only the ratio carries over to another machine. No
test runs it and nothing asserts a duration.
"""

from __future__ import annotations

import argparse
import bisect
import platform
import random
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
sys.path.insert(0, str(Path(__file__).resolve().parent))

from bots_bench import cpu_model

from projections.sorted_set import SortedSet


class FlatList:
    """What the store held before: a dict of scores and one sorted list of (score, member)."""

    def __init__(self) -> None:
        self.scores: dict[str, float] = {}
        self.order: list[tuple[float, str]] = []

    def add(self, member: str, score: float) -> None:
        old = self.scores.pop(member, None)
        if old is not None:
            del self.order[bisect.bisect_left(self.order, (old, member))]
        self.scores[member] = score
        bisect.insort(self.order, (score, member))

    def page(self, start: tuple[float, str], limit: int) -> list[tuple[float, str]]:
        at = bisect.bisect_left(self.order, start)
        return self.order[at : at + limit]


def chunked_page(held: SortedSet, start: tuple[float, str], limit: int) -> list[tuple[float, str]]:
    return held.upward(start, after=False, stop=(float("inf"), ""), limit=limit)


def filled(kind: type, size: int, rng: random.Random) -> object:
    held = kind()
    for i in range(size):
        held.add(f"game-{i:08}", rng.random() * size)
    return held


def per_change(held: object, size: int, rng: random.Random, changes: int) -> float:
    members = [f"game-{rng.randrange(size):08}" for _ in range(changes)]
    scores = [rng.random() * size for _ in range(changes)]
    add = held.add  # type: ignore[attr-defined]
    began = time.perf_counter()
    for member, score in zip(members, scores, strict=True):
        add(member, score)
    return (time.perf_counter() - began) / changes


def per_read(held: object, size: int, rng: random.Random, reads: int) -> float:
    starts = [(rng.random() * size, "") for _ in range(reads)]
    if isinstance(held, SortedSet):
        began = time.perf_counter()
        for start in starts:
            chunked_page(held, start, 50)
    else:
        page = held.page  # type: ignore[attr-defined]
        began = time.perf_counter()
        for start in starts:
            page(start, 50)
    return (time.perf_counter() - began) / reads


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--sizes", default="1000,10000,100000,1000000")
    parser.add_argument("--rounds", type=int, default=3)
    args = parser.parse_args()
    print(f"{cpu_model()}, Python {platform.python_version()}")
    print("size | change: flat list, chunks (ratio) | page of 50: flat list, chunks (ratio)")
    for size in (int(s) for s in args.sizes.split(",")):
        rng = random.Random(size)
        flat, chunks = filled(FlatList, size, rng), filled(SortedSet, size, rng)
        changes = {FlatList: [], SortedSet: []}  # type: dict[type, list[float]]
        reads = {FlatList: [], SortedSet: []}  # type: dict[type, list[float]]
        for _ in range(args.rounds):
            for held in (flat, chunks):
                changes[type(held)].append(per_change(held, size, rng, 20_000))
                reads[type(held)].append(per_read(held, size, rng, 5_000))
        a, b = min(changes[FlatList]), min(changes[SortedSet])
        c, d = min(reads[FlatList]), min(reads[SortedSet])
        print(
            f"{size:>9,} | {a * 1e6:7.2f} µs, {b * 1e6:5.2f} µs ({b / a:4.2f}x) "
            f"| {c * 1e6:6.2f} µs, {d * 1e6:6.2f} µs ({d / c:4.2f}x)"
        )


if __name__ == "__main__":
    main()
