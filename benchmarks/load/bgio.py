"""boardgame.io as a server under test (benchmarks/side_by_side.py): its Node side in
benchmarks/bgio/ installed with `npm ci` when missing, its server started in memory or on
PostgreSQL and stopped, and a table opened through its lobby routes for the same bots that
play Fairway (its answers to actions have Fairway's shape: benchmarks/bgio/server.js)."""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
import shutil
import subprocess
import time
from pathlib import Path
from typing import Any
from urllib.parse import quote

import msgspec
from psycopg import conninfo

from benchmarks.load.bots import ENCODE, Status, Table
from benchmarks.load.client import Client, HttpError, RawClient
from benchmarks.load.stats import Stats

NODE_DIR = Path(__file__).resolve().parents[1] / "bgio"


class Created(msgspec.Struct):
    matchID: str


class Joined(msgspec.Struct):
    playerCredentials: str


DECODE_CREATED = msgspec.json.Decoder(Created).decode
DECODE_JOINED = msgspec.json.Decoder(Joined).decode


def ensure_installed() -> str:
    """`npm ci` in benchmarks/bgio/ unless its node_modules is there; returns the versions
    of Node and boardgame.io."""
    if shutil.which("node") is None or shutil.which("npm") is None:
        raise RuntimeError("boardgame.io needs Node.js and npm on the PATH")
    if not (NODE_DIR / "node_modules" / "boardgame.io").is_dir():
        print(f"installing boardgame.io: npm ci in {NODE_DIR}")
        subprocess.run(["npm", "ci", "--no-audit", "--no-fund"], cwd=NODE_DIR, check=True)
    node = subprocess.run(["node", "--version"], capture_output=True, text=True, check=True)
    manifest = NODE_DIR / "node_modules" / "boardgame.io" / "package.json"
    version = json.loads(manifest.read_text())["version"]
    return f"Node {node.stdout.strip()}, boardgame.io {version}"


def node_url(url: str) -> str:
    """A libpq connection string as the URI that Sequelize (bgio-postgres) reads."""
    parts = conninfo.conninfo_to_dict(url)
    user = quote(str(parts.get("user") or "postgres"))
    if parts.get("password"):
        user += ":" + quote(str(parts["password"]))
    host, port = parts.get("host") or "127.0.0.1", parts.get("port") or 5432
    return f"postgresql://{user}@{host}:{port}/{quote(str(parts['dbname']))}"


def start_bgio(
    port: int, database_url: str | None, pool_size: int, log: Path
) -> subprocess.Popen[bytes]:
    """`node server.js` (NODE_ENV=production: boardgame.io skips its development checks);
    on PostgreSQL when `database_url` is given, through a pool of `pool_size` connections.
    Its stderr goes to `log`."""
    env = os.environ | {"PORT": str(port), "NODE_ENV": "production"}
    env.pop("DATABASE_URL", None)
    if database_url:
        env["DATABASE_URL"] = node_url(database_url)
        env["POOL_SIZE"] = str(pool_size)
    with open(log, "ab") as err:
        return subprocess.Popen(
            ["node", "server.js"],
            cwd=NODE_DIR,
            env=env,
            start_new_session=True,
            stdout=subprocess.DEVNULL,
            stderr=err,
        )


async def wait_health(port: int, server: subprocess.Popen[bytes], what: str) -> None:
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        if server.poll() is not None:
            raise RuntimeError(f"{what} exited with {server.returncode}")
        with contextlib.suppress(OSError, HttpError):
            client = RawClient(port)
            code, _ = await client.call("GET", "/health")
            await client.close()
            if code == 200:
                return
        await asyncio.sleep(0.2)
    raise RuntimeError(f"{what} did not answer /health in 60 s")


def stop_bgio(server: subprocess.Popen[bytes]) -> None:
    if server.poll() is None:
        server.terminate()
        try:
            server.wait(timeout=20)
        except subprocess.TimeoutExpired:
            server.kill()
            server.wait()


async def open_bgio_table(
    client: Client, variant: str, seats: int, options: dict[str, Any], stats: Stats | None
) -> Table:
    """A match made and joined by every seat through boardgame.io's lobby routes (its only
    game is Hang Ten-like: `variant` and `options` are not used). A seat's token is
    `<playerID>:<credentials>`, which benchmarks/bgio/server.js reads from the bearer."""

    def count() -> None:
        if stats is not None and stats.measuring:
            stats.other += 1

    code, body = await client.call("POST", "/games/hang-ten/create", ENCODE({"numPlayers": seats}))
    count()
    if code != 200:
        raise HttpError(f"POST create: {code} {body[:300]!r}")
    match = DECODE_CREATED(body).matchID
    tokens = []
    for seat in range(seats):
        code, body = await client.call(
            "POST",
            f"/games/hang-ten/{match}/join",
            ENCODE({"playerID": str(seat), "playerName": f"bot {seat}"}),
        )
        count()
        if code != 200:
            raise HttpError(f"POST join: {code} {body[:300]!r}")
        tokens.append(f"{seat}:{DECODE_JOINED(body).playerCredentials}")
    # a match starts when it is made: hand 1's setup, every seat to flip
    return Table(match, "", tokens, Status("setup", 1, list(range(seats))), 0)
