"""Processes the tests start that end with the test process, however it ends.

A test stops what it started in a `finally`; a test process that is killed (pytest-timeout
ending a hung xdist worker, a kill -9, an out-of-memory kill) runs no `finally`, and a
`fairway serve` or a Redis node it started would run on, holding its port, until someone
killed it by hand. `dies_with_us()` asks Linux to send the child SIGTERM when the process that
started it ends (`PR_SET_PDEATHSIG`, kept across the child's `exec`). Elsewhere it does
nothing, and the `finally` is all there is.

Pass `dies_with_us()` as `preexec_fn` to `subprocess.Popen`, from the thread that lives as
long as the child should: Linux sends the signal when the starting THREAD ends. Every caller
here starts its children from the test's main thread.
"""

from __future__ import annotations

import ctypes
import os
import signal
import sys
from collections.abc import Callable

PR_SET_PDEATHSIG = 1
_PRCTL = ctypes.CDLL(None, use_errno=True).prctl if sys.platform.startswith("linux") else None
"""Looked up here, in the parent: the child, between fork and exec, only calls it (a lookup
there could wait for a loader lock another thread held at the fork)."""


def dies_with_us() -> Callable[[], None]:
    """A `preexec_fn` for a child of this process: SIGTERM when this process ends. If it has
    already ended (between the fork and the child's call), the child ends at once."""
    parent = os.getpid()

    def in_the_child() -> None:
        if _PRCTL is None:
            return
        if _PRCTL(PR_SET_PDEATHSIG, signal.SIGTERM, 0, 0, 0) != 0:
            return  # not worth failing a test for: its `finally` still stops the child
        if os.getppid() != parent:
            os._exit(1)

    return in_the_child
