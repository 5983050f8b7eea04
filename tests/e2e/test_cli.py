"""The real `fairway` command in a subprocess: simulate, serve (embedded store), migrate."""

from __future__ import annotations

import json
import os
import signal
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import httpx
import pytest

from tests.api.server import free_port
from tests.support.children import dies_with_us

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


class Served:
    """A running `fairway serve`: its base URL, and its stdout and stderr as files."""

    def __init__(self, base: str, process: subprocess.Popen[bytes], out: Path, err: Path) -> None:
        self.base, self.process, self.out, self.err = base, process, out, err

    def stderr_lines(self) -> list[str]:
        return [line for line in self.err.read_text().splitlines() if line.strip()]


@contextmanager
def serving(
    data_dir: Path,
    *python_options: str,
    env: dict[str, str] | None = None,
    args: tuple[str, ...] = (),
) -> Iterator[Served]:
    """`fairway serve` on a free port with the embedded store in `data_dir` (unless `env`
    names a DATABASE_URL), until the block ends (SIGINT, as an operator's Ctrl-C);
    `python_options` go to the interpreter, `args` to `fairway serve`."""
    port = free_port()
    environment = {k: v for k, v in os.environ.items() if k not in ("DATABASE_URL", "REDIS_URL")}
    environment |= {"FAIRWAY_DATA_DIR": str(data_dir), "FAIRWAY_LOG_FORMAT": "json"}
    environment |= env or {}
    out, err = data_dir / "serve.out", data_dir / "serve.err"
    with out.open("wb") as stdout, err.open("wb") as stderr:
        process = subprocess.Popen(
            [
                sys.executable,
                *python_options,
                "-m",
                "service.cli",
                "serve",
                "--port",
                str(port),
                *args,
            ],
            cwd=ROOT,
            env=environment,
            preexec_fn=dies_with_us(),
            stdout=stdout,
            stderr=stderr,
        )
    served = Served(f"http://127.0.0.1:{port}", process, out, err)
    try:
        # a new interpreter importing the service: seconds alone, far more on a busy machine
        deadline = time.monotonic() + 120
        while True:
            try:
                if httpx.get(served.base + "/ready", timeout=1).status_code == 200:
                    break
            except httpx.TransportError:
                pass
            assert process.poll() is None, out.read_text() + err.read_text()
            assert time.monotonic() < deadline, "fairway serve did not become ready"
            time.sleep(0.1)
        yield served
    finally:
        process.send_signal(signal.SIGINT)
        process.wait(timeout=30)


def test_serve_runs_on_the_embedded_store_and_keeps_games_across_restarts(tmp_path: Path) -> None:
    with serving(tmp_path) as served, httpx.Client(base_url=served.base) as http:
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
    assert any(p.name not in ("serve.out", "serve.err") for p in tmp_path.iterdir()), (
        "the embedded store wrote its file"
    )

    with serving(tmp_path) as served, httpx.Client(base_url=served.base) as http:
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


@pytest.mark.parametrize(
    ("variable", "value", "line"),
    [
        ("FAIRWAY_PORT", "abc", "fairway serve: FAIRWAY_PORT must be an integer, not 'abc'"),
        (
            "FAIRWAY_PORT",
            "70000",
            "fairway serve: FAIRWAY_PORT must be between 0 and 65535, not 70000",
        ),
        ("FAIRWAY_WORKERS", "0", "fairway serve: FAIRWAY_WORKERS must be at least 1, not 0"),
        (
            "FAIRWAY_LOG_FORMAT",
            "xml",
            "fairway serve: FAIRWAY_LOG_FORMAT must be one of json, console, auto, not 'xml'",
        ),
        (
            "FAIRWAY_LOG_LEVEL",
            "loud",
            "fairway serve: FAIRWAY_LOG_LEVEL must be one of debug, info, warning, error, "
            "critical, not 'loud'",
        ),
        (
            "FAIRWAY_HEADER_TIMEOUT",
            "-1",
            "fairway serve: FAIRWAY_HEADER_TIMEOUT must be a number greater than 0, not '-1'",
        ),
    ],
)
def test_a_bad_setting_stops_serve_with_one_line_naming_it(
    variable: str, value: str, line: str, tmp_path: Path
) -> None:
    env = {**os.environ, "FAIRWAY_DATA_DIR": str(tmp_path), variable: value}
    result = run("serve", "--port", str(free_port()), env=env)
    assert result.returncode == 2
    assert result.stderr == line + "\n"


def test_a_bad_setting_stops_migrate_before_it_connects() -> None:
    env = {
        **os.environ,
        "DATABASE_URL": "postgresql://127.0.0.1:1/nowhere",
        "FAIRWAY_DB_TIMEOUT": "soon",
    }
    result = run("migrate", env=env)
    assert result.returncode == 2
    assert result.stderr == "fairway migrate: FAIRWAY_DB_TIMEOUT must be a number, not 'soon'\n"


def test_a_bad_port_flag_is_refused_by_the_command_line() -> None:
    result = run("serve", "--port", "70000")
    assert result.returncode == 2
    assert "--port: must be between 0 and 65535, not 70000" in result.stderr
    assert "Traceback" not in result.stderr


def test_serve_writes_every_log_line_as_json_the_libraries_included(tmp_path: Path) -> None:
    with serving(tmp_path, env={"FAIRWAY_LOG_LEVEL": "info"}) as served:
        assert httpx.get(served.base + "/health").status_code == 200
        # Not HTTP at all: uvicorn's own logger warns through the stdlib.
        with socket.create_connection(("127.0.0.1", int(served.base.rsplit(":", 1)[1]))) as raw:
            raw.sendall(b"\x16\x03\x01 not a request\r\n\r\n")
            raw.settimeout(5)
            while raw.recv(4096):
                pass
    lines = served.stderr_lines()
    records = [json.loads(line) for line in lines]
    for record in records:
        assert {"level", "logger", "event", "timestamp"} <= set(record), record
    loggers = {record["logger"] for record in records}
    assert "fairway" in loggers
    assert any(r["logger"].startswith("uvicorn") and r["level"] == "warning" for r in records), (
        loggers
    )
    assert any(r["event"] == "request" and r["path"] == "/health" for r in records)


FORBIDDEN = {"pytest", "_pytest", "mypy", "schemathesis", "hypothesis"}


def test_serve_loads_only_runtime_dependencies(tmp_path: Path) -> None:
    """Python's import log of the serving process itself, after it has answered a request."""
    with serving(tmp_path, "-X", "importtime") as served:
        assert httpx.get(served.base + "/variants").status_code == 200
    imported = {
        line.rsplit("|", 1)[1].strip()
        for line in served.stderr_lines()
        if line.startswith("import time:") and "|" in line
    }
    packages = {name.split(".")[0] for name in imported}
    assert {"service", "litestar", "uvicorn"} <= packages, "the import log is missing"
    assert not packages & FORBIDDEN
