"""The fault run's checks, made once the load and the faults have stopped and the system
is whole again. Each returns a list of failures (empty: passed)."""

from __future__ import annotations

import asyncio
import json
from collections import defaultdict
from typing import Any

import msgspec
import psycopg

from events.store import PostgresStore
from projections.catalog import fresh
from projections.projector import Projector
from projections.redis_store import RedisProjectionStore
from service.audit.audit import audit_game
from service.audit.keys import accepted_keys
from service.audit.receipts import check_receipts, parse_receipts
from service.commands.keys import key_digest
from tests.support.projected import built_to, caught_up, differences, dumps

from .load import Ack, Ledger, Watched
from .tournaments import tournaments_checked


def stored_keys(url: str) -> dict[str, dict[str, list[int]]]:
    """{game id: {idempotency key as stored: [versions]}} of every game stream."""
    found: dict[str, dict[str, list[int]]] = defaultdict(lambda: defaultdict(list))
    with psycopg.connect(url) as conn:
        rows = conn.execute(
            "SELECT stream_id, stream_version, metadata::text FROM events "
            "WHERE stream_id LIKE 'game:%' ORDER BY stream_id, stream_version"
        ).fetchall()
    for stream, version, metadata in rows:
        key = json.loads(metadata).get("idempotency_key")
        if isinstance(key, str):
            found[stream.removeprefix("game:")][key].append(version)
    return found


def exactly_once(url: str, acks: list[Ack]) -> list[str]:
    return compare_keys(stored_keys(url), acks)


def compare_keys(stored: dict[str, dict[str, list[int]]], acks: list[Ack]) -> list[str]:
    """Every acknowledged write is stored once (the events its key appended are one
    contiguous run, in the game it was sent to) and ends at the version acknowledged. A key
    that derives a token is stored as its digest."""
    failures = []
    for ack in acks:
        game = stored.get(ack.game_id, {})
        versions = game.get(ack.key) or game.get(key_digest(ack.key))
        if not versions:
            failures.append(f"lost: {ack.kind} {ack.key} of {ack.game_id} at v{ack.version}")
        elif versions != list(range(versions[0], versions[-1] + 1)):
            failures.append(f"duplicated: {ack.kind} {ack.key} of {ack.game_id}: {versions}")
        elif versions[-1] != ack.version:
            failures.append(f"moved: {ack.kind} {ack.key} acked v{ack.version}, stored {versions}")
    return failures


async def audits(url: str, ledger: Ledger) -> tuple[int, int, list[str]]:
    """Every game's audit (its chain, deals, moves, scores), with the receipts its players
    hold checked against every key the installation registered. (games, receipts, failures)"""
    by_game: dict[str, list[Ack]] = defaultdict(list)
    for ack in ledger.acks:
        by_game[ack.game_id].append(ack)
    store = await PostgresStore.open(url)
    failures: list[str] = []
    receipts_checked = 0
    try:
        keys = await accepted_keys(store)
        for game_id in ledger.games:
            rows = await store.read_stored(f"game:{game_id}")
            held = by_game.get(game_id, [])
            extra: list[Any] = []
            results: list[Any] = []
            if held:
                receipts = parse_receipts(msgspec.json.encode([a.receipt for a in held]))
                check, results = check_receipts(game_id, rows, receipts, keys)
                extra = [check]
                receipts_checked += len(receipts)
            report = audit_game(game_id, rows, extra=extra, receipts=results)
            if not report.ok:
                failures.append(f"audit of {game_id}: {msgspec.json.encode(report)[:600]!r}")
    finally:
        await store.close()
    return len(ledger.games), receipts_checked, failures


def streams_once_in_order(url: str, ledger: Ledger) -> tuple[int, int, list[str]]:
    """(events seen, resumes, failures) of every watcher; see `stream_failures`."""
    hashes: dict[tuple[str, int], str] = {}
    with psycopg.connect(url) as conn:
        for stream, version, digest in conn.execute(
            "SELECT stream_id, stream_version, hash FROM events WHERE stream_id LIKE 'game:%'"
        ):
            hashes[(stream.removeprefix("game:"), version)] = bytes(digest).hex()
    seen = sum(len(w.versions) for w in ledger.watched)
    resumes = sum(max(0, w.connects - 1) for w in ledger.watched)
    return seen, resumes, stream_failures(ledger.watched, hashes)


def stream_failures(watched: list[Watched], hashes: dict[tuple[str, int], str]) -> list[str]:
    """Each watcher received its game's events from version 1, each once, in order across
    its resumes, each with the hash stored at its version where the stream shows one (a
    spectator gets none for an event it may not know whole)."""
    failures: list[str] = []
    for each in watched:
        if each.versions != list(range(1, len(each.versions) + 1)):
            failures.append(f"stream of {each.game_id}: versions {each.versions[:60]}")
        for version, digest in each.hashes.items():
            if digest and hashes.get((each.game_id, version)) != digest:
                failures.append(f"stream of {each.game_id}: v{version} is not the stored one")
    return failures


async def read_models(url: str, redis_url: str, prefix: str) -> tuple[int, list[str]]:
    """The live projections, once caught up with the feed's head, equal key for key what a
    projector builds from position zero into a fresh prefix. (documents compared, failures)"""
    feed = await PostgresStore.open(url, poll_interval=0.05)
    live = RedisProjectionStore.from_url(redis_url, prefix, timeout=10)
    rebuilt = RedisProjectionStore.from_url(redis_url, "fault-zero", timeout=10)
    try:
        mark = await feed.feed_head()
        await caught_up(live, mark)
        found = await dumps(live)
        await built_to(Projector(fresh(), rebuilt, feed, grace=0), mark)
        from_zero = await dumps(rebuilt)
        failures = [
            f"read model {name} differs from a rebuild: {differences(found[name], docs)}"
            for name, docs in from_zero.items()
            if differences(found[name], docs)
        ]
        return sum(len(docs) for docs in from_zero.values()), failures
    finally:
        await live.close()
        await rebuilt.close()
        await feed.close()


def run_checks(url: str, redis_url: str, ledger: Ledger) -> dict[str, Any]:
    """Every check; {name: (figure, failures)}."""
    out: dict[str, Any] = {}
    out["stored exactly once"] = (len(ledger.acks), exactly_once(url, ledger.acks))
    games, receipts, failures = asyncio.run(audits(url, ledger))
    out["chains and receipts verify"] = (f"{games} games, {receipts} receipts", failures)
    documents, failures = asyncio.run(read_models(url, redis_url, "fw"))
    out["read models equal a rebuild"] = (f"{documents} documents", failures)
    out["tournaments: rounds once, audits pass"] = tournaments_checked(url, ledger)
    seen, resumes, failures = streams_once_in_order(url, ledger)
    watchers = len(ledger.watched)
    out["SSE once, in order"] = (f"{watchers} watchers, {seen} events, {resumes} resumes", failures)
    out["no 500 answered"] = (
        sum(ledger.statuses.values()),
        [f"500: {what}" for what in ledger.five_hundreds[:20]],
    )
    out["every 503 and 429 said Retry-After"] = (
        sum(n for status, n in ledger.statuses.items() if status in (429, 503)),
        ledger.without_retry_after[:20],
    )
    return out
