"""A process a test starts ends when the test process is killed (tests/support/children.py):
a parent killed with -9, as pytest-timeout ends a hung worker, leaves no child behind. The
same parent without `dies_with_us()` leaves its child running, which shows the test can
fail."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

pytestmark = pytest.mark.e2e

ROOT = Path(__file__).resolve().parents[2]
WITHIN = 20.0
"""Seconds for a signalled child to be gone: a bound for a stalled machine, never timed."""

PARENT = """
import subprocess, sys, time
from tests.support.children import dies_with_us
child = subprocess.Popen(
    [sys.executable, "-c", "import time; time.sleep(120)"],
    preexec_fn=dies_with_us() if sys.argv[1] == "yes" else None,
)
print(child.pid, flush=True)
time.sleep(120)
"""


def running(pid: int) -> bool:
    """Alive and not a zombie waiting for its reaper."""
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except FileNotFoundError:
        return False
    return state != "Z"


def orphan_after_parent_killed(dies: bool) -> int:
    """Start a parent that starts a child, kill the parent with -9; the child's pid."""
    parent = subprocess.Popen(
        [sys.executable, "-c", PARENT, "yes" if dies else "no"],
        cwd=ROOT,
        stdout=subprocess.PIPE,
        text=True,
    )
    assert parent.stdout is not None
    child = int(parent.stdout.readline())
    assert running(child)
    parent.kill()
    parent.wait()
    return child


def gone_within(pid: int, seconds: float) -> bool:
    deadline = time.monotonic() + seconds
    while running(pid):
        if time.monotonic() > deadline:
            return False
        time.sleep(0.05)
    return True


def test_a_child_ends_when_the_process_that_started_it_is_killed() -> None:
    child = orphan_after_parent_killed(dies=True)
    assert gone_within(child, WITHIN), f"child {child} outlived its killed parent"


def test_without_it_the_child_outlives_its_killed_parent() -> None:
    child = orphan_after_parent_killed(dies=False)
    try:
        assert not gone_within(child, 1.0), "it ended by itself: the test above proves nothing"
    finally:
        os.kill(child, signal.SIGKILL)
