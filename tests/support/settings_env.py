"""`Settings` written back as the environment `Settings.from_env` reads, for the tests that
start the real `fairway serve` in a process of its own with a test's settings.

Each field is read from `FAIRWAY_<FIELD>`, but for the two URLs an operator sets anyway
(DATABASE_URL, REDIS_URL); `command_retries` has no variable at all, so settings that change
it cannot be handed to another process and are refused here rather than lost on the way.
Only the fields that differ from the defaults are written: the process then starts from the
same defaults (tests/unit/service/test_settings_env.py checks the round trip)."""

from __future__ import annotations

from pathlib import Path

import msgspec

from service.ops.settings import Settings

UNPREFIXED = {"database_url": "DATABASE_URL", "redis_url": "REDIS_URL"}
NO_VARIABLE = {"command_retries"}


def variable(field: str) -> str:
    """The environment variable `Settings.from_env` reads `field` from."""
    if field in NO_VARIABLE:
        raise ValueError(f"Settings.{field} is read from no environment variable")
    return UNPREFIXED.get(field) or f"FAIRWAY_{field.upper()}"


def to_env(settings: Settings) -> dict[str, str]:
    """The variables that give `settings` to `Settings.from_env`: one for each field that
    differs from the default. Raises ValueError for a value no variable can carry."""
    default = Settings()
    env = {}
    for field in msgspec.structs.fields(Settings):
        value = getattr(settings, field.name)
        if value != getattr(default, field.name):
            env[variable(field.name)] = text(field.name, value)
    return env


def text(field: str, value: object) -> str:
    """`value` as its variable holds it; a blank or missing value would read as the default."""
    if isinstance(value, bool):
        written = "true" if value else "false"
    elif isinstance(value, tuple):
        written = ",".join(value)
    elif isinstance(value, float):
        written = repr(value)  # the shortest text that reads back as the same float
    elif isinstance(value, (str, int, Path)):
        written = str(value)
    else:
        raise ValueError(f"Settings.{field} = {value!r} has no text form")
    if not written.strip():
        raise ValueError(f"Settings.{field} = {value!r} would read back as the default")
    return written
