"""The fault run (benchmarks/fault_run.py), short: its own PostgreSQL and Redis, three API
instances, two projectors, the referee and the bots as real processes, played over HTTP for
at least 12 s while each kind of fault comes once (kill -9 of an API instance, a projector, the
referee and the bots; Redis killed and restarted, then flushed; PostgreSQL crashed and
restarted; its connections cut, then black-holed). It must pass every check, and leave no
process and no directory behind. A machine without PostgreSQL's server binaries or
redis-server fails it (the run cannot start): never skipped.

And the run's own checks, shown to catch what they are there for: a lost, a duplicated and
a moved write; a stream that skipped, repeated or changed an event.
"""

from __future__ import annotations

import os
import re
from pathlib import Path

import pytest

from benchmarks.fault.checks import compare_keys, stream_failures
from benchmarks.fault.load import Ack, Watched
from benchmarks.fault_run import run
from service.commands.keys import key_digest

RECEIPT = {"version": 0}


def ack(key: str, version: int, game: str = "g1") -> Ack:
    return Ack(game, "action", key, version, RECEIPT)


def test_the_store_check_finds_a_lost_a_duplicated_and_a_moved_write() -> None:
    stored = {"g1": {"k1": [3], "k2": [4, 5], "k3": [6, 9], "k4": [7], key_digest("c1"): [2]}}
    assert compare_keys(stored, [ack("k1", 3), ack("k2", 5), ack("c1", 2)]) == []
    failures = compare_keys(stored, [ack("k9", 3), ack("k3", 9), ack("k4", 8), ack("k1", 3, "g2")])
    assert [failure.split(":")[0] for failure in failures] == [
        "lost",
        "duplicated",
        "moved",
        "lost",
    ]


def test_the_stream_check_finds_a_gap_a_repeat_and_a_changed_event() -> None:
    hashes = {("g", 1): "a", ("g", 2): "b", ("g", 3): "c"}

    def watched(versions: list[int], changed: str = "") -> Watched:
        seen = Watched("g", versions, {v: hashes[("g", v)] for v in versions})
        if changed:
            seen.hashes[versions[-1]] = changed
        return seen

    assert stream_failures([watched([1, 2, 3]), watched([1])], hashes) == []
    for bad in (watched([1, 3]), watched([1, 2, 2, 3]), watched([2, 3]), watched([1, 2], "x")):
        assert stream_failures([bad], hashes), bad


def leftovers(root: str) -> list[int]:
    """Processes whose command line or environment names the run's directory."""
    found = []
    for entry in os.listdir("/proc"):
        if entry.isdigit() and int(entry) != os.getpid():
            for part in ("cmdline", "environ"):
                try:
                    if root.encode() in Path(f"/proc/{entry}/{part}").read_bytes():
                        found.append(int(entry))
                        break
                except OSError:
                    continue
    return found


@pytest.mark.slow
@pytest.mark.e2e
@pytest.mark.timeout(240)
def test_a_short_fault_run_loses_nothing_and_cleans_up(capsys: pytest.CaptureFixture[str]) -> None:
    status = run(seconds=12, players=3, watchers=2, every=1.0, seed=7, pause=0.5)
    out = capsys.readouterr().out
    print(out)
    assert status == 0, out
    kinds = re.findall(r"^    1 x (.+)$", out, re.MULTILINE)
    assert len(set(kinds)) >= 8, kinds
    assert re.search(r"\[ok\] stored exactly once: [1-9]", out), out
    (root,) = re.findall(r"system up in [\d.]+ s \((\S+)\)", out)
    assert not Path(root).exists(), f"{root} left behind"
    assert leftovers(root) == [], f"processes left behind: {leftovers(root)}"
