"""`fairway serve` (the real command, embedded store) with live event streams: an action
reaches the streams, and SIGTERM ends open streams cleanly instead of waiting on them."""

from __future__ import annotations

import random
import signal
from pathlib import Path

import httpx
import pytest

from tests.api.players import open_table
from tests.api.sse import Stream
from tests.api.test_api_stream import step, stream_path
from tests.e2e.test_cli import serving

pytestmark = pytest.mark.e2e


def test_serve_streams_on_the_embedded_store_and_sigterm_ends_open_streams(
    tmp_path: Path,
) -> None:
    with serving(tmp_path) as served, httpx.Client(base_url=served.base, timeout=20) as http:
        table = open_table(http, "golf", 2, {"hands": 1})
        spectator = Stream(served.base, stream_path(table))
        seat = Stream(served.base, stream_path(table), headers=table.auth(1))
        version = step(table, random.Random(8))
        assert version is not None
        for stream in (spectator, seat):
            assert [e["version"] for e in stream.wait_for(version)] == list(range(1, version + 1))
        served.process.send_signal(signal.SIGTERM)
        # uvicorn re-raises the signal once it has shut down gracefully.
        assert served.process.wait(timeout=30) in (0, -signal.SIGTERM)
        assert any('"stopped"' in line for line in served.stderr_lines()), "lifespan ended"
        for stream in (spectator, seat):
            assert stream.ended.wait(30)
            assert stream.ended_cleanly, "the stream's body was ended, not cut"
            stream.close()
