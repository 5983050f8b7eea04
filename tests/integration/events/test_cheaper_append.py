"""Migration 0008 (a cheaper fairway_append): the same appends store the same rows, chained
alike, answer the same errors and draw the same positions as at 0007; a database upgraded
with rows in it goes on chaining them; the app role still appends only through it."""

from __future__ import annotations

import random
import uuid
from collections.abc import Iterator
from typing import Any

import psycopg
import pytest
from psycopg import conninfo

from events.migrate import migrate
from events.store import AppendResult, ConcurrencyError, PostgresStore
from events.store.base import STREAM_ID_PATTERN
from tests.support.event_samples import a_game, dealt, new, started, stream
from tests.support.services import throwaway_database

pytestmark = pytest.mark.integration

BEFORE = 7  # 0007_append_batch, the head before 0008
ONE = (
    "SELECT * FROM fairway_append(%s::text, %s::int4, %s::uuid, %s::text, %s::int4,"
    " %s::text, %s::text)"
)
MANY = (
    "SELECT * FROM fairway_append(%s::text, %s::int4, %s::uuid[], %s::text[], %s::int4[],"
    " %s::text[], %s::text[])"
)
BATCH = (  # {} is fairway_append_batch (0007), or fairway_append_together (0008)
    "SELECT * FROM {}(%s::text[], %s::int4[], %s::int4[], %s::uuid[],"
    " %s::text[], %s::int4[], %s::text[], %s::text[])"
)
STARTED = '{"type":"game.started","variant":"golf","players":4}'
NAMED = '{"type":"player.named","name":"Zoë 🃏 \\"quoted\\""}'  # non-ASCII, escapes
STREAM_IDS = [
    *("a", "a" * 63, "a" * 63 + ":" + "B" * 64, "a-1:_-Z9", "x:y"),  # valid
    *("", "a" * 64, "a:" + "b" * 65, "a:", ":a", "a:b:c", "A", "1a", "-a", "a b"),
    *("a\n", "é", "a:é", "a" * 64 + ":b", "a_b", "a:b c"),
]


def scenario(round_: int, batch: str) -> Iterator[tuple[str, tuple[object, ...]]]:
    """Appends of every kind, the ones that fail included, with ids fixed in advance so
    that two databases get the very same calls."""
    rng = random.Random(round_)
    ids = [uuid.UUID(int=rng.getrandbits(128), version=4) for _ in range(12 + len(STREAM_IDS))]
    a, b, c = (f"game:{name}-{round_}" for name in "abc")

    def one(stream_id: str, expected: int, i: int, data: str = STARTED) -> tuple[str, Any]:
        return ONE, (stream_id, expected, ids[i], "game.started", 1, data, '{"seat":1}')

    def many(stream_id: str, expected: int, ns: list[int], data: str = STARTED) -> Any:
        n = len(ns)
        meta = ['{"r":"é"}'] * n
        return MANY, (
            stream_id,
            expected,
            [ids[i] for i in ns],
            ["t.x"] * n,
            [2] * n,
            [data] * n,
            meta,
        )

    yield one(a, 0, 0)
    yield one(a, 0, 7, '{"type": oops')  # not JSON, at a stale version: FW001, on a custom plan
    yield one(a, 1, 1, NAMED)
    yield many(a, 2, [2, 3, 4], NAMED)
    yield one(a, 0, 5)  # FW001, detail 5
    yield one(a, 1, 1, NAMED)  # a retry: the stored rows
    yield many(a, 2, [2, 3, 4], NAMED)  # a retry of three
    yield many(a, 2, [2, 3, 6])  # FW002: some stored, one not
    yield one(a, 5, 1, NAMED)  # FW002: stored at another version
    yield one(b, 0, 0)  # the id is stored in another stream: the unique index, a position burnt
    yield one(c, 0, 7, '{"type": oops')  # not JSON
    yield MANY, (c, 0, [ids[8]], ["t", "t"], [1], [STARTED], ["{}"])  # arrays differ
    yield MANY, (c, 0, [], [], [], [], [])  # nothing to append
    yield many(c, 0, [8, 9])
    yield (
        BATCH,
        (  # one event, two events, a stale version, a retry
            [b, c, a, a],
            [0, 2, 3, 1],
            [1, 2, 1, 1],
            [ids[10], ids[11], ids[5], ids[6], ids[1]],
            ["t"] * 5,
            [1] * 5,
            [STARTED, NAMED, STARTED, STARTED, NAMED],
            ["{}"] * 5,
        ),
    )
    for i, stream_id in enumerate(STREAM_IDS, start=12):
        yield one(stream_id, 0, i)


SEQUENCE = "SELECT last_value + is_called::int FROM events_global_position_seq"


def run(url: str, batch: str) -> tuple[list[object], list[bool], list[tuple[Any, ...]]]:
    """Every call's outcome (its rows, or its SQLSTATE, message and detail) and whether it
    drew a position, three rounds on one connection (past the five custom plans after which
    plpgsql may keep a generic one); then every stored row, in position order, but for its
    position, transaction id and time."""
    outcomes: list[object] = []
    drew: list[bool] = []
    with psycopg.connect(url, autocommit=True) as conn:
        for round_ in range(3):
            for query, params in scenario(round_, batch):
                before = conn.execute(SEQUENCE).fetchone()
                try:
                    outcome: object = conn.execute(query.encode(), params).fetchall()
                except psycopg.Error as exc:
                    outcome = (exc.sqlstate, exc.diag.message_primary, exc.diag.message_detail)
                outcomes.append(outcome)
                drew.append(conn.execute(SEQUENCE).fetchone() != before)
        rows = conn.execute(
            "SELECT stream_id, stream_version, event_id, type, schema_version, data::text,"
            " metadata::text, hash FROM events ORDER BY global_position"
        ).fetchall()
    return outcomes, drew, rows


def positionless(outcome: object) -> object:
    """Rows without their position (fairway_append's second column, the batch's third)."""
    if not isinstance(outcome, list):
        return outcome
    return [(r[0], r[2]) if len(r) == 3 else (*r[:2], *r[3:]) for r in outcome]


def test_the_same_appends_store_the_same_rows_and_errors_as_before(
    postgres_server_url: str,
) -> None:
    """Positions alone may differ: data that is not JSON, at the expected version, draws
    one at 0008 (its INSERT fails after drawing), at 0007 only once plpgsql keeps a generic
    plan. Every other call draws what it drew before: none when the version is wrong."""
    with (
        throwaway_database(postgres_server_url, "fairway_0007") as old,
        throwaway_database(postgres_server_url, "fairway_0008") as new_,
    ):
        migrate(old, through=BEFORE)
        assert migrate(new_)[-1] == "0008_cheaper_append"
        before = run(old, "fairway_append_batch")
        after = run(new_, "fairway_append_together")

    outcomes, drew, rows = after
    assert [positionless(o) for o in outcomes] == [positionless(o) for o in before[0]]
    assert rows == before[2]
    not_json = [isinstance(o, tuple) and o[0] == "22P02" for o in outcomes]
    assert [d for d, skip in zip(drew, not_json, strict=True) if not skip] == [
        d for d, skip in zip(before[1], not_json, strict=True) if not skip
    ]
    failed = [o[0] for o in outcomes if isinstance(o, tuple)]
    assert {"FW001", "FW002", "FW004", "22P02", "23505"} <= set(failed)
    assert not any(
        d for d, o in zip(drew, outcomes, strict=True) if isinstance(o, tuple) and o[0][:2] == "FW"
    )
    accepted = {r[0] for r in rows}
    for stream_id in STREAM_IDS:
        assert (stream_id in accepted) == bool(STREAM_ID_PATTERN.fullmatch(stream_id)), stream_id


async def test_an_upgraded_database_goes_on_chaining_the_rows_stored_before(
    postgres_server_url: str,
) -> None:
    with throwaway_database(postgres_server_url, "fairway_upgrade") as url:
        migrate(url, through=BEFORE)
        as_app = conninfo.make_conninfo(url, options="-c role=fairway_app")
        game, other = stream(), stream()
        first_game = a_game()
        async with await PostgresStore.open(as_app) as store:
            stored = await store.append(game, 0, first_game)
            await store.append(game, 4, [new(dealt(3))])
            await store.append(other, 0, [new(started())])

        assert migrate(url) == ["0008_cheaper_append"]

        async with await PostgresStore.open(as_app) as store:
            assert await store.append(game, 0, first_game) == stored  # a retry, as before
            with pytest.raises(ConcurrencyError) as stale:
                await store.append(game, 4, [new(dealt(4))])
            assert stale.value.actual_version == 5
            appended: list[AppendResult] = [
                await store.append(game, 5, [new(dealt(4))]),
                await store.append(game, 6, [new(dealt(5)), new(dealt(6))]),
                await store.append(other, 1, a_game()),
            ]
            for stream_id, version in ((game, 8), (other, 5)):
                checked = await store.verify_stream(stream_id)
                assert checked.version == version
            assert [r.first_version for r in appended] == [6, 7, 2]
            assert appended[1].head_hash == (await store.read_stream(game))[-1].hash

            # the previous release's batch, kept for a rolling deploy, on the new functions
            third = stream()
            async with await psycopg.AsyncConnection.connect(as_app, autocommit=True) as conn:
                cursor = await conn.execute(
                    "SELECT append_no, stream_version, error_state FROM fairway_append_batch("
                    "%s::text[], %s::int4[], %s::int4[], %s::uuid[], %s::text[], %s::int4[],"
                    " %s::text[], %s::text[])",
                    (
                        [third, game],
                        [0, 0],
                        [2, 1],
                        [uuid.uuid4() for _ in range(3)],
                        ["t"] * 3,
                        [1] * 3,
                        [STARTED] * 3,
                        ["{}"] * 3,
                    ),
                )
                assert await cursor.fetchall() == [(1, 1, None), (1, 2, None), (2, None, "FW001")]
            assert (await store.verify_stream(third)).version == 2


def test_the_helpers_are_not_the_app_roles_to_run(database_url: str) -> None:
    with psycopg.connect(database_url) as conn:
        rows = conn.execute(
            "SELECT p.proname, has_function_privilege('fairway_app', p.oid, 'EXECUTE'),"
            " p.prosecdef, p.proconfig FROM pg_proc p"
            " WHERE p.proname IN ('fairway_append', 'fairway_append_batch',"
            " 'fairway_append_together', 'fairway_append_replay', 'fairway_chain_link',"
            " 'fairway_valid_stream_id')"
            " ORDER BY p.proname, p.prosecdef"
        ).fetchall()
    pinned = ["search_path=pg_catalog, public, pg_temp"]
    assert rows == [
        ("fairway_append", True, True, pinned),
        ("fairway_append", True, True, pinned),
        ("fairway_append_batch", True, False, pinned),
        ("fairway_append_replay", False, False, pinned),
        ("fairway_append_together", True, False, pinned),
        ("fairway_chain_link", False, False, None),
        ("fairway_valid_stream_id", False, False, None),
    ]
