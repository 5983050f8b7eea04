"""The real `fairway` command in a subprocess: simulate, serve (embedded store), migrate."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import httpx
import pytest

from tests.api.server import free_port

pytestmark = pytest.mark.e2e

FAIRWAY = [sys.executable, "-m", "service.cli"]
ROOT = Path(__file__).resolve().parents[2]


def run(*args: str, env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [*FAIRWAY, *args], cwd=ROOT, env=env, capture_output=True, text=True, timeout=300
    )


def test_simulate_prints_statistics_as_json_and_is_reproducible() -> None:
    args = (
        "simulate",
        "--variant",
        "golf",
        "--players",
        "3",
        "--games",
        "4",
        "--seed",
        "9",
        "--bots",
        "greedy,random",
        "--json",
    )
    first = run(*args)
    assert first.returncode == 0, first.stderr
    summary = json.loads(first.stdout)
    assert {"variant", "players", "games", "hands", "games_per_second", "wins"} <= set(summary)
    assert summary["variant"] == "golf"
    assert summary["games"] == 4
    assert summary["hands"] == 4 * 9
    assert sum(summary["wins"].values()) == pytest.approx(4)
    again = json.loads(run(*args).stdout)
    for key in ("hands", "wins", "mean_final_total", "turns_per_hand", "events"):
        assert again[key] == summary[key]


def test_simulate_prints_a_table_and_refuses_a_bad_player_count() -> None:
    table = run("simulate", "--variant", "tens-shedding", "--players", "2", "--games", "2")
    assert table.returncode == 0, table.stderr
    assert "games/s" in table.stdout
    assert "random" in table.stdout
    bad = run("simulate", "--variant", "hang-ten", "--players", "2", "--games", "1")
    assert bad.returncode == 2
    assert "hang-ten" in bad.stderr.lower() or "players" in bad.stderr.lower()


@contextmanager
def serving(data_dir: Path) -> Iterator[str]:
    port = free_port()
    env = {k: v for k, v in os.environ.items() if k not in ("DATABASE_URL", "REDIS_URL")}
    env |= {"FAIRWAY_DATA_DIR": str(data_dir), "FAIRWAY_LOG_FORMAT": "json"}
    process = subprocess.Popen(
        [*FAIRWAY, "serve", "--port", str(port)],
        cwd=ROOT,
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
    )
    base = f"http://127.0.0.1:{port}"
    try:
        deadline = time.monotonic() + 30
        while True:
            try:
                if httpx.get(base + "/ready", timeout=1).status_code == 200:
                    break
            except httpx.TransportError:
                pass
            assert process.poll() is None, process.stdout.read() if process.stdout else ""
            assert time.monotonic() < deadline, "fairway serve did not become ready"
            time.sleep(0.1)
        yield base
    finally:
        process.send_signal(signal.SIGINT)
        process.wait(timeout=30)


def test_serve_runs_on_the_embedded_store_and_keeps_games_across_restarts(tmp_path: Path) -> None:
    with serving(tmp_path) as base, httpx.Client(base_url=base) as http:
        assert http.get("/ready").json()["store"] == "EmbeddedStore"
        created = http.post("/games", json={"variant": "basketball", "seats": 2}).json()
        game = created["game_id"]
        tokens = [
            http.post(f"/games/{game}/seats", json={"name": n}).json()["token"]
            for n in ("ann", "bob")
        ]
        started = http.post(
            f"/games/{game}/start", headers={"Authorization": f"Bearer {created['creator_token']}"}
        )
        assert started.status_code == 200
        seat = started.json()["status"]["to_act"][0]
        acted = http.post(
            f"/games/{game}/actions",
            json={"type": "peek"},
            headers={"Authorization": f"Bearer {tokens[seat]}"},
        )
        assert acted.status_code == 200, acted.text
        version = acted.json()["version"]
        before = http.get(
            f"/games/{game}/me", headers={"Authorization": f"Bearer {tokens[seat]}"}
        ).json()
    assert any(tmp_path.iterdir()), "the embedded store wrote its file"

    with serving(tmp_path) as base, httpx.Client(base_url=base) as http:
        after = http.get(
            f"/games/{game}/me", headers={"Authorization": f"Bearer {tokens[seat]}"}
        ).json()
        assert after["version"] == version
        assert after["view"] == before["view"]


def test_migrate_is_idempotent(database_url: str) -> None:
    env = {**os.environ, "DATABASE_URL": database_url}
    first = run("migrate", env=env)
    assert first.returncode == 0, first.stderr
    second = run("migrate", env=env)
    assert second.returncode == 0, second.stderr
    assert "applied 0 migration(s)" in second.stdout


def test_openapi_check_passes_on_the_committed_document() -> None:
    result = run("openapi", "--check")
    assert result.returncode == 0, result.stderr
