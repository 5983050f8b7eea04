"""Replay, audit and export over real HTTP, against what PostgreSQL holds.

Given a game played through the API, the replay of each finished hand shows the table the
stored events fold to after each of them; the audit holds; the export carries the stored
text and verifies offline; the feed's chain fields are the stored links. Given a row altered
in PostgreSQL behind the service's back, the audit names its version; given receipts from
the action answers, one the stored history contradicts is reported."""

from __future__ import annotations

import itertools
import json
import random
import uuid
from dataclasses import dataclass
from typing import Any

import httpx
import msgspec
import psycopg
import pytest

from domain.variants import fold
from events.codec import GENESIS_HASH, default_codec
from events.schema.common import GameStarted
from service.audit.offline import verify_export
from service.contract.receipts import Receipt
from tests.api.players import Table, concrete, open_table

pytestmark = pytest.mark.api

CODEC = default_codec()


@dataclass
class Played:
    table: Table
    receipts: list[dict[str, Any]]


def play_to_the_end(table: Table, rng: random.Random, limit: int = 2000) -> list[dict[str, Any]]:
    receipts = []
    for _ in range(limit):
        status = table.public()["status"]
        if status["phase"] == "game_over":
            return receipts
        seat = rng.choice(status["to_act"])
        action = concrete(rng.choice(table.me(seat)["legal_actions"]), rng)
        answer = table.act(seat, action, **{"Idempotency-Key": str(uuid.uuid4())})
        assert answer.status_code == 200, answer.text
        receipts.append(answer.json()["receipt"])
    raise AssertionError("the game did not end")


def pg_rows(database_url: str, game_id: str) -> list[tuple[Any, ...]]:
    with psycopg.connect(database_url, autocommit=True) as conn:
        return conn.execute(
            "SELECT stream_version, event_id::text, type, schema_version, data::text,"
            " metadata::text, hash FROM events WHERE stream_id = %s ORDER BY stream_version",
            (f"game:{game_id}",),
        ).fetchall()


@pytest.fixture(scope="module")
def finished(api_base: str) -> Played:
    with httpx.Client(base_url=api_base, timeout=20) as http:
        table = open_table(http, "golf", 3, {"hands": 2, "turn_limit": 6})
        receipts = play_to_the_end(table, random.Random(4))
        return Played(Table(table.http, table.game_id, table.creator, table.tokens), receipts)


def test_each_replay_step_is_the_table_the_stored_events_fold_to(
    http: httpx.Client, finished: Played, database_url: str
) -> None:
    game_id = finished.table.game_id
    rows = pg_rows(database_url, game_id)
    events = [CODEC.decode(kind, sv, data) for _, _, kind, sv, data, _, _ in rows]
    started = next(i for i, e in enumerate(events) if isinstance(e, GameStarted))
    for hand in (1, 2):
        response = http.get(f"/games/{game_id}/hands/{hand}/replay")
        assert response.status_code == 200, response.text
        replay = response.json()
        assert (replay["game_id"], replay["hand"], replay["variant"]) == (game_id, hand, "golf")
        assert replay["steps"][0]["event"]["type"] == "hand.dealt"
        assert replay["steps"][0]["event"]["seed"], "a finished hand's seed is shown"
        for step in replay["steps"]:
            decider, state = fold(events[started : step["version"]])
            assert step["table"] == msgspec.json.decode(msgspec.json.encode(decider.table(state)))
    missing = http.get(f"/games/{game_id}/hands/3/replay")
    assert missing.status_code == 404
    assert missing.json()["code"] == "hand_not_found"
    assert http.get("/games/0000000000000000/hands/1/replay").json()["code"] == "game_not_found"


def test_a_hand_in_play_is_not_replayed_not_exported_and_pending_in_the_audit(
    http: httpx.Client,
) -> None:
    table = open_table(http, "hang-ten", 4, {"hands": 1})
    replay = http.get(f"/games/{table.game_id}/hands/1/replay")
    assert replay.status_code == 409
    assert replay.json()["code"] == "hand_in_play"
    assert "steps" not in replay.text
    export = http.get(f"/games/{table.game_id}/export")
    assert export.status_code == 409
    assert export.json()["code"] == "game_in_play"
    audit = http.get(f"/games/{table.game_id}/audit").json()
    assert audit["ok"] is True
    assert audit["hands"] == [{"hand": 1, "status": "pending", "checks": []}]
    assert audit["chain"]["head_hash"] is None  # in play: the last event may hide a card


def test_the_audit_of_a_finished_game_holds_check_by_check(
    http: httpx.Client, finished: Played
) -> None:
    audit = http.get(f"/games/{finished.table.game_id}/audit")
    assert audit.status_code == 200
    report = audit.json()
    assert report["ok"] is True, report["failures"]
    assert [c["name"] for c in report["checks"]] == [
        "chain", "commitments", "deck", "legality", "scores", "winners"
    ]  # fmt: skip
    assert all(c["ok"] and c["checked"] > 0 for c in report["checks"])
    assert [h["status"] for h in report["hands"]] == ["verified", "verified"]
    export = http.get(f"/games/{finished.table.game_id}/export").json()
    assert report["chain"]["head_hash"] == export["head_hash"]
    scores = http.get(f"/games/{finished.table.game_id}/scores").json()
    assert report["winners"] == scores["winners"]
    assert http.get("/games/0123456789abcdef/audit").json()["code"] == "game_not_found"


def test_the_export_holds_the_stored_text_and_verifies_offline_as_json_and_ndjson(
    http: httpx.Client, finished: Played, database_url: str
) -> None:
    game_id = finished.table.game_id
    response = http.get(f"/games/{game_id}/export")
    assert response.status_code == 200
    assert response.headers["content-type"].startswith("application/json")
    document = response.json()
    rows = pg_rows(database_url, game_id)
    exported = [
        (e["version"], e["event_id"], e["type"], e["data"], e["metadata"])
        for e in document["events"]
    ]
    assert exported == [(v, i, t, d, m) for v, i, t, _, d, m, _ in rows]
    assert [e["hash"] for e in document["events"]] == [bytes(r[6]).hex() for r in rows]
    assert document["head_hash"] == bytes(rows[-1][6]).hex()
    assert [s["hand"] for s in document["seeds"]] == [1, 2]
    assert verify_export(response.content).ok
    ndjson = http.get(f"/games/{game_id}/export", headers={"Accept": "application/x-ndjson"})
    assert ndjson.headers["content-type"].startswith("application/x-ndjson")
    lines = ndjson.content.splitlines()
    assert len(lines) == 1 + len(rows)
    assert msgspec.json.decode(lines[1])["hash"] == document["events"][0]["hash"]
    assert verify_export(ndjson.content).ok


def test_the_feed_shows_the_stored_links_and_after_the_game_every_event_id(
    http: httpx.Client, finished: Played, database_url: str
) -> None:
    game_id = finished.table.game_id
    rows = pg_rows(database_url, game_id)
    entries = http.get(f"/games/{game_id}/events", params={"limit": 1000}).json()["events"]
    assert [e["hash"] for e in entries] == [bytes(r[6]).hex() for r in rows]
    assert entries[0]["prev_hash"] == GENESIS_HASH.hex()
    assert all(b["prev_hash"] == a["hash"] for a, b in itertools.pairwise(entries))
    for entry, row in zip(entries, rows, strict=True):
        if entry["event"]["type"] in ("game.created", "seat.claimed"):  # token hashes: hidden
            assert entry["event_id"] is None
            assert entry["metadata"] is None
        else:
            assert entry["event_id"] == row[1]
            assert entry["recorded_at"] is not None
            assert entry["metadata"] == msgspec.json.decode(row[5]) | {}
            # (the known keys; every key this service writes is one of them)


def test_receipts_from_the_answers_hold_and_a_contradicted_one_is_reported(
    http: httpx.Client, finished: Played
) -> None:
    game_id = finished.table.game_id
    held = finished.receipts[:3] + finished.receipts[-2:]
    ok = http.post(f"/games/{game_id}/audit", json={"receipts": held})
    assert ok.status_code == 200, ok.text
    assert ok.json()["ok"] is True
    assert [r["ok"] for r in ok.json()["receipts"]] == [True] * 5
    forged = msgspec.structs.replace(
        msgspec.convert(held[0], Receipt), hash=held[1]["hash"]
    )  # another hash under the first receipt's signature
    beyond = msgspec.structs.replace(msgspec.convert(held[-1], Receipt), version=10_000)
    report = http.post(
        f"/games/{game_id}/audit",
        json={"receipts": [msgspec.to_builtins(forged), msgspec.to_builtins(beyond)]},
    ).json()
    assert report["ok"] is False
    assert [r["detail"].split(":")[0] for r in report["receipts"]] == ["bad signature"] * 2
    assert report["failures"][0]["check"] == "receipts"
    bad = http.post(f"/games/{game_id}/audit", json={"receipts": [{"game_id": 1}]})
    assert bad.status_code == 422
    assert bad.json()["code"] == "invalid_request"


def test_the_audit_takes_its_documented_100_real_receipts_and_refuses_more_naming_the_limit(
    http: httpx.Client,
) -> None:
    """Given 100 receipts from the answers of one game's actions, posted indented (34 KB,
    past the 16 KiB other bodies are held to), then each is checked; 101 are refused with a
    problem naming the 100, and a body past the route's 64 KiB with one naming its bytes."""
    table = open_table(http, "golf", 2, {"hands": 9})
    rng = random.Random(100)
    receipts: list[dict[str, Any]] = []
    while len(receipts) < 101:
        status = table.public()["status"]
        assert status["phase"] != "game_over", "the game ended before 101 actions"
        seat = rng.choice(status["to_act"])
        answer = table.act(seat, concrete(rng.choice(table.me(seat)["legal_actions"]), rng))
        assert answer.status_code == 200, answer.text
        receipts.append(answer.json()["receipt"])
    path = f"/games/{table.game_id}/audit"
    json_body = {"Content-Type": "application/json"}

    indented = json.dumps({"receipts": receipts[:100]}, indent=4).encode()
    assert len(indented) > 16 * 1024
    audit = http.post(path, content=indented, headers=json_body)
    assert audit.status_code == 200, audit.text
    assert [r["version"] for r in audit.json()["receipts"]] == [
        r["version"] for r in receipts[:100]
    ]
    assert all(r["ok"] for r in audit.json()["receipts"])

    over = http.post(path, json={"receipts": receipts})
    assert over.status_code == 422, over.text
    assert over.json()["code"] == "invalid_request"
    assert "100" in over.json()["detail"] + str(over.json()["errors"])

    padded = b'{"receipts": []' + b" " * (64 * 1024) + b"}"
    too_large = http.post(path, content=padded, headers=json_body)
    assert too_large.status_code == 413, too_large.text
    assert too_large.json()["code"] == "body_too_large"
    assert str(64 * 1024) in too_large.json()["detail"]


def test_a_row_altered_in_postgresql_is_reported_at_its_version(
    http: httpx.Client, database_url: str
) -> None:
    table = open_table(http, "golf", 2, {"hands": 1, "turn_limit": 4})
    receipts = play_to_the_end(table, random.Random(9))
    rows = pg_rows(database_url, table.game_id)
    version = next(r[0] for r in rows if r[2] == "card.replaced")
    data = msgspec.json.decode(rows[version - 1][4])
    data["card"] = "2C" if data["card"] != "2C" else "3C"
    with psycopg.connect(database_url, autocommit=True) as conn:  # as superuser
        conn.execute("SET session_replication_role = replica")  # past the immutability trigger
        conn.execute(
            "UPDATE events SET data = %s WHERE stream_id = %s AND stream_version = %s",
            (msgspec.json.encode(data).decode(), f"game:{table.game_id}", version),
        )
    report = http.get(f"/games/{table.game_id}/audit").json()
    assert report["ok"] is False
    assert report["chain"]["intact"] is False
    assert report["chain"]["failure"]["version"] == version
    assert report["failures"][0]["version"] == version
    assert report["hands"][0]["status"] == "unverifiable"  # past the break: not in public
    export = http.get(f"/games/{table.game_id}/export")
    assert export.status_code == 500
    assert export.json()["code"] == "history_corrupt"
    audit = http.post(f"/games/{table.game_id}/audit", json={"receipts": receipts}).json()
    assert all(r["ok"] for r in audit["receipts"]), "an edit that keeps the hashes: the chain's"

    last = len(rows)
    with psycopg.connect(database_url, autocommit=True) as conn:
        conn.execute("SET session_replication_role = replica")
        conn.execute(
            "UPDATE events SET hash = %s WHERE stream_id = %s AND stream_version = %s",
            (bytes(32), f"game:{table.game_id}", last),
        )
    audit = http.post(f"/games/{table.game_id}/audit", json={"receipts": receipts[-1:]}).json()
    assert audit["receipts"][0]["version"] == last
    assert audit["receipts"][0]["detail"].startswith("hash differs")
    with psycopg.connect(database_url, autocommit=True) as conn:
        conn.execute("SET session_replication_role = replica")
        conn.execute(
            "DELETE FROM events WHERE stream_id = %s AND stream_version = %s",
            (f"game:{table.game_id}", last),
        )
    audit = http.post(f"/games/{table.game_id}/audit", json={"receipts": receipts[-1:]}).json()
    assert audit["receipts"][0]["detail"].startswith("version missing")
    assert audit["failures"][0]["version"] == version  # the edit is still the first failure


def test_a_feed_page_past_the_end_is_empty(http: httpx.Client, finished: Played) -> None:
    game_id = finished.table.game_id
    page = http.get(f"/games/{game_id}/events", params={"after": 9_999_999})
    assert page.status_code == 200
    assert page.json()["events"] == []
    last = page.json()["version"]
    tail = http.get(f"/games/{game_id}/events", params={"after": last - 1}).json()["events"]
    assert [e["version"] for e in tail] == [last]
    assert tail[0]["prev_hash"] is not None
