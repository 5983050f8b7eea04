#!/usr/bin/env python3
"""Bootstrap and run Fairway on a machine that has only Python 3.11+ and pip.

    python3 tools/dev.py serve [fairway serve options]   # run the service
    python3 tools/dev.py test [pytest options]           # run the test suite, in parallel
    python3 tools/dev.py check                           # lint, format check, types, OpenAPI drift
    python3 tools/dev.py fairway ...                     # any fairway subcommand

The first run creates .venv, installs uv into it and syncs the locked dependencies
(uv.lock); later runs only re-sync, which takes a moment. `serve` and `fairway` install only
the runtime dependencies (and leave whatever else is there); `test` and `check` add the
development group (pytest, mypy, ruff, schemathesis...).

`test` runs pytest on a worker per core (pytest-xdist, `-n auto`) unless the options choose:
`-n 0` runs in one process (as `--pdb` needs), `-n 4` on four workers.
"""

from __future__ import annotations

import os
import subprocess
import sys
import venv
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
VENV = ROOT / ".venv"
BIN = VENV / ("Scripts" if os.name == "nt" else "bin")


def run(*args: str | Path) -> None:
    subprocess.run([str(a) for a in args], cwd=ROOT, check=True)


def bootstrap(dev: bool) -> None:
    """Create .venv with uv in it and sync the lock: everything for `dev`, else the runtime
    dependencies only, without removing what a development sync installed."""
    if sys.version_info < (3, 11):  # noqa: UP036 - the bootstrap runs on any python3
        sys.exit(f"Fairway needs Python 3.11 or newer; this is {sys.version.split()[0]}")
    if not (BIN / "python").exists():
        print("creating .venv ...", flush=True)
        venv.EnvBuilder(with_pip=True).create(VENV)
    if not (BIN / "uv").exists():
        print("installing uv into .venv ...", flush=True)
        run(BIN / "python", "-m", "pip", "install", "--quiet", "uv>=0.4")
    env = {**os.environ, "UV_PROJECT_ENVIRONMENT": str(VENV)}
    only = [] if dev else ["--no-dev", "--inexact"]
    # --compile-bytecode: the libraries compiled once (later syncs only check), else every
    # interpreter the tests start (xdist workers, the CLI in the e2e tests) compiles them
    # again where PYTHONDONTWRITEBYTECODE is set.
    subprocess.run(
        [
            *(str(BIN / "uv"), "sync", "--frozen", *only, "--compile-bytecode", "--quiet"),
            *("--python", str(BIN / "python")),
        ],
        cwd=ROOT,
        env=env,
        check=True,
    )


def pytest_options(given: list[str]) -> list[str]:
    """The caller's pytest options, with `-n auto` unless they name a number of workers or
    ask for something one process must do (a debugger)."""
    chosen = any(
        option.startswith(("-n", "--numprocesses", "--pdb", "--trace"))
        or option.endswith("no:xdist")
        for option in given
    )
    return given if chosen else ["-n", "auto", *given]


def main(argv: list[str]) -> int:
    if not argv or argv[0] not in {"serve", "test", "check", "fairway"}:
        print(__doc__)
        return 2
    command, rest = argv[0], argv[1:]
    bootstrap(dev=command in {"test", "check"})
    os.chdir(ROOT)
    if command == "serve":
        cmd = [str(BIN / "fairway"), "serve", *rest]
    elif command == "fairway":
        cmd = [str(BIN / "fairway"), *rest]
    elif command == "test":
        cmd = [str(BIN / "python"), "-m", "pytest", *pytest_options(rest)]
    else:
        for step in (
            [BIN / "ruff", "check", "."],
            [BIN / "ruff", "format", "--check", "."],
            [BIN / "mypy", "domain", "events", "service", "projections"],
            [BIN / "fairway", "openapi", "--check"],
        ):
            print(
                "$",
                " ".join(Path(str(step[0])).name if i == 0 else str(a) for i, a in enumerate(step)),
                flush=True,
            )
            code = subprocess.run([str(a) for a in step], cwd=ROOT).returncode
            if code:
                return code
        return 0
    os.execv(cmd[0], cmd)
    return 0  # pragma: no cover


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
