"""The `fairway` command: serve, migrate, simulate, projector, referee, bots, openapi, audit,
verify."""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Callable, Sequence

from service.ops.settings import SettingsError, integer


def _simulate(args: argparse.Namespace) -> int:
    from domain.errors import RuleViolation
    from service.cli.simulate import render, simulate

    try:
        summary = simulate(args.variant, args.players, args.games, args.seed, args.bots)
    except (RuleViolation, ValueError) as error:
        print(f"fairway simulate: {error}", file=sys.stderr)
        return 2
    print(json.dumps(summary) if args.json else render(summary))
    return 0


def _serve(args: argparse.Namespace) -> int:
    from service.cli.serve import serve

    return serve(host=args.host, port=args.port, workers=args.workers)


def _migrate(args: argparse.Namespace) -> int:
    from events.migrate import migrate
    from service.ops.settings import Settings

    settings = Settings.from_env()
    if not settings.database_url:
        print(
            "fairway migrate: DATABASE_URL is not set (the embedded store needs no migration)",
            file=sys.stderr,
        )
        return 2
    applied = migrate(settings.database_url)
    print(f"applied {len(applied)} migration(s)" + (f": {', '.join(applied)}" if applied else ""))
    return 0


def _projector(args: argparse.Namespace) -> int:
    from service.cli.projector import run_projector

    return run_projector(args.rebuild)


def _referee(args: argparse.Namespace) -> int:
    from service.cli.referee import run_referee

    return run_referee()


def _bots(args: argparse.Namespace) -> int:
    from service.cli.bots import run_bots

    return run_bots()


def _openapi(args: argparse.Namespace) -> int:
    from service.cli.openapi import check, write

    return check() if args.check else write()


def _argument(parse: Callable[[str], int]) -> Callable[[str], int]:
    """A settings parser as an argparse type, so that a flag and its variable agree."""

    def checked(text: str) -> int:
        try:
            return parse(text)
        except ValueError as error:
            raise argparse.ArgumentTypeError(str(error)) from None

    return checked


def parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog="fairway", description="The Fairway card-game service")
    sub = p.add_subparsers(dest="command", required=True)

    s = sub.add_parser("serve", help="run the HTTP service")
    s.add_argument("--host", default=None, help="bind address (default 127.0.0.1)")
    s.add_argument(
        "--port", type=_argument(integer(0, 65535)), default=None, help="port (default 8000)"
    )
    s.add_argument(
        "--workers", type=_argument(integer(1)), default=None, help="worker processes (default 1)"
    )
    s.set_defaults(run=_serve)

    m = sub.add_parser("migrate", help="apply the PostgreSQL migrations (idempotent)")
    m.set_defaults(run=_migrate)

    sim = sub.add_parser("simulate", help="play whole games in-process with bots")
    sim.add_argument(
        "--variant",
        required=True,
        choices=["hang-ten", "tens", "golf", "basketball", "tens-shedding"],
    )
    sim.add_argument("--players", type=int, required=True)
    sim.add_argument("--games", type=int, default=10)
    sim.add_argument("--seed", type=int, default=0)
    sim.add_argument(
        "--bots",
        type=lambda s: s.split(","),
        default=["random"],
        help="bot levels given to seats in turn (random, greedy, strong), e.g. strong,greedy",
    )
    sim.add_argument("--json", action="store_true", help="print one JSON object")
    sim.set_defaults(run=_simulate)

    pr = sub.add_parser("projector", help="run the projections into Redis (REDIS_URL)")
    pr.add_argument(
        "--rebuild",
        metavar="NAME",
        default=None,
        help="build projection NAME from zero, switch readers to it, drop the old one, exit",
    )
    pr.set_defaults(run=_projector)

    rf = sub.add_parser(
        "referee", help="play timed-out turns and resigned seats (a process of its own)"
    )
    rf.set_defaults(run=_referee)

    bt = sub.add_parser("bots", help="play the seats bots hold (a process of its own)")
    bt.set_defaults(run=_bots)

    o = sub.add_parser("openapi", help="write openapi/openapi.json, or --check for drift")
    o.add_argument("--check", action="store_true")
    o.set_defaults(run=_openapi)

    from service.cli.audit import add_commands

    add_commands(sub)
    return p


VALUES_WITH_DASHES = frozenset({"--key"})
"""Options whose value may begin with `-`: a receipt key in base64url does about once in 64,
and argparse would take `--key -abc...` for two options."""


def joined(argv: Sequence[str]) -> list[str]:
    """`--key VALUE` as `--key=VALUE`, so that no value is mistaken for an option."""
    out: list[str] = []
    tokens = iter(argv)
    for token in tokens:
        value = next(tokens, None) if token in VALUES_WITH_DASHES else None
        out.append(token if value is None else f"{token}={value}")
    return out


def main(argv: Sequence[str] | None = None) -> int:
    args = parser().parse_args(joined(sys.argv[1:] if argv is None else argv))
    try:
        return int(args.run(args))
    except SettingsError as error:
        # A bad environment variable is the operator's to fix: one line naming it, no trace.
        print(f"fairway {args.command}: {error}", file=sys.stderr)
        return 2
