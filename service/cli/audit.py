"""`fairway audit GAME_ID` (from the event store) and `fairway verify FILE` (from an export,
no database, no server): two doors onto `audit_game`, printing the same report; and
`fairway audit-tournament ID`, onto `audit_tournament` (service/audit/tournament.py)."""

from __future__ import annotations

import argparse
import asyncio
import re
import sys
from pathlib import Path
from typing import Any

import msgspec

from service.audit.report import AuditReport
from service.audit.text import report_lines

GAME_ID = re.compile(r"^[0-9a-f]{16}$")


def _print(report: AuditReport, as_json: bool) -> int:
    if as_json:
        print(msgspec.json.encode(report).decode())
    else:
        for line in report_lines(report):
            print(line, flush=True)
    return 0 if report.ok else 1


async def _read(
    game_id: str, database_url: str | None, data_dir: Path, keys: list[bytes] | None
) -> tuple[Any, list[bytes]]:
    """The game's stored rows, and the keys its receipts may be signed with: `keys` and
    every one the installation registered in the store (None: no receipts to check)."""
    from events.store import open_store
    from service.audit.keys import accepted_keys
    from service.play.loading import stream_id

    store = await open_store(database_url, data_dir, pool_min_size=1, pool_max_size=1)
    try:
        rows = await store.read_stored(stream_id(game_id))
        return rows, [] if keys is None else await accepted_keys(store, keys)
    finally:
        await store.close()


def _audit(args: argparse.Namespace) -> int:
    from events.store import StoreError
    from service.audit.audit import RulesVersionRefused, audit_game
    from service.ops.settings import Settings

    if not GAME_ID.fullmatch(args.game_id):
        print(f"fairway audit: {args.game_id!r} is not a game id (16 hex digits)", file=sys.stderr)
        return 2
    try:
        receipts, keys = _receipts(args, need_key=False)
    except (OSError, ValueError) as error:
        print(f"fairway audit: {error}", file=sys.stderr)
        return 2
    settings = Settings.from_env()
    url = args.url if args.url is not None else settings.database_url
    data_dir = args.data_dir if args.data_dir is not None else settings.data_dir
    if args.data_dir is not None:
        url = None
    try:
        rows, keys = asyncio.run(_read(args.game_id, url, data_dir, keys if receipts else None))
    except StoreError as error:
        print(f"fairway audit: the event store: {error}", file=sys.stderr)
        return 2
    if not rows:
        print(f"fairway audit: no game {args.game_id} in the store", file=sys.stderr)
        return 2
    try:
        if not receipts:
            return _print(audit_game(args.game_id, rows), args.json)
        return _audit_receipts(args, rows, receipts, keys)
    except RulesVersionRefused as refused:
        print(f"fairway audit: refused: {refused.detail}", file=sys.stderr)
        return 2


def _audit_receipts(args: argparse.Namespace, rows: Any, receipts: Any, keys: Any) -> int:
    from service.audit.audit import audit_game
    from service.audit.receipts import check_receipts

    if not keys:
        print(
            "fairway audit: --receipts needs the service's public key (--key): the store "
            "has none registered",
            file=sys.stderr,
        )
        return 2
    check, results = check_receipts(args.game_id, rows, receipts, keys)
    return _print(audit_game(args.game_id, rows, extra=[check], receipts=results), args.json)


def _audit_tournament(args: argparse.Namespace) -> int:
    from events.store import StoreError, open_store
    from service.audit.tournament import audit_tournament, read_tournament
    from service.audit.tournament_report import report_lines
    from service.ops.settings import Settings

    if not GAME_ID.fullmatch(args.tournament_id):
        print(
            f"fairway audit-tournament: {args.tournament_id!r} is not a tournament id "
            "(16 hex digits)",
            file=sys.stderr,
        )
        return 2
    settings = Settings.from_env()
    url = None if args.data_dir is not None else (args.url or settings.database_url)
    data_dir = args.data_dir if args.data_dir is not None else settings.data_dir

    async def read() -> Any:
        store = await open_store(url, data_dir, pool_min_size=1, pool_max_size=1)
        try:
            return await read_tournament(store, args.tournament_id)
        finally:
            await store.close()

    try:
        rows, games = asyncio.run(read())
    except StoreError as error:
        print(f"fairway audit-tournament: the event store: {error}", file=sys.stderr)
        return 2
    if not rows:
        print(f"fairway audit-tournament: no tournament {args.tournament_id}", file=sys.stderr)
        return 2
    report = audit_tournament(args.tournament_id, rows, games)
    if args.json:
        print(msgspec.json.encode(report).decode())
    else:
        for line in report_lines(report):
            print(line, flush=True)
    return 0 if report.ok else 1


def _receipts(args: argparse.Namespace, need_key: bool = True) -> tuple[list[Any], list[bytes]]:
    """The receipts of `--receipts` and the keys of `--key`; OSError or ValueError."""
    from service.audit.receipts import parse_key, parse_receipts

    receipts = [] if args.receipts is None else parse_receipts(Path(args.receipts).read_bytes())
    keys = [parse_key(key) for key in args.key]
    if receipts and not keys and need_key:
        raise ValueError("--receipts needs the service's public key (--key)")
    return receipts, keys


def _verify(args: argparse.Namespace) -> int:
    from service.audit.audit import RulesVersionRefused
    from service.audit.offline import verify_export

    try:
        text = sys.stdin.buffer.read() if args.file == "-" else Path(args.file).read_bytes()
        receipts, keys = _receipts(args)
        report = verify_export(text, receipts, keys)
    except RulesVersionRefused as refused:
        print(f"fairway verify: refused: {refused.detail}", file=sys.stderr)
        return 2
    except (OSError, ValueError) as error:
        print(f"fairway verify: {error}", file=sys.stderr)
        return 2
    return _print(report, args.json)


def _receipt_options(parser: Any, more: str = "") -> None:
    parser.add_argument("--receipts", default=None, help="a JSON list of signed receipts to check")
    parser.add_argument(
        "--key",
        action="append",
        default=[],
        help="the receipts' public key (base64url, as GET /.well-known/fairway-receipt-key "
        f"gives it, or hex); repeat for several{more}",
    )


def add_commands(sub: Any) -> None:
    a = sub.add_parser("audit", help="audit a game's stored history (chain, deals, moves, scores)")
    a.add_argument("game_id")
    where = a.add_mutually_exclusive_group()
    where.add_argument("--url", default=None, help="PostgreSQL URL (default: DATABASE_URL)")
    where.add_argument("--data-dir", type=Path, default=None, help="the embedded store's directory")
    a.add_argument("--json", action="store_true", help="print the report as JSON")
    _receipt_options(a, "; every key registered in the store is accepted too")
    a.set_defaults(run=_audit)

    t = sub.add_parser(
        "audit-tournament",
        help="audit a tournament: its round seeds, round 1's seating, duplicate deals, games",
    )
    t.add_argument("tournament_id")
    where = t.add_mutually_exclusive_group()
    where.add_argument("--url", default=None, help="PostgreSQL URL (default: DATABASE_URL)")
    where.add_argument("--data-dir", type=Path, default=None, help="the embedded store's directory")
    t.add_argument("--json", action="store_true", help="print the report as JSON")
    t.set_defaults(run=_audit_tournament)

    v = sub.add_parser("verify", help="verify an exported game offline (no database, no server)")
    v.add_argument("file", help="the export, JSON or NDJSON ('-': standard input)")
    _receipt_options(v)
    v.add_argument("--json", action="store_true", help="print the report as JSON")
    v.set_defaults(run=_verify)
