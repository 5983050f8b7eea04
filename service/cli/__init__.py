"""The `fairway` command and its subcommands: serve, migrate, simulate, projector, referee,
bots, openapi, audit, audit-tournament, verify (each in a module of its own)."""

from service.cli.commands import main

__all__ = ["main"]
