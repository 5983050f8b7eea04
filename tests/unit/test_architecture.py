"""The import rules of DESIGN.md, enforced: the domain stays pure, the layers point down."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

pytestmark = pytest.mark.unit

ROOT = Path(__file__).resolve().parents[2]

# What each layer must never import (a module or any of its submodules).
FORBIDDEN: dict[str, set[str]] = {
    "domain": {
        "service",
        "projections",
        "events.store",
        "events.codec",
        "events.migrate",
        # I/O, clocks, randomness and the environment arrive as arguments, never imported.
        "psycopg",
        "psycopg_pool",
        "redis",
        "litestar",
        "structlog",
        "uvicorn",
        "httpx",
        "sqlite3",
        "socket",
        "asyncio",
        "threading",
        "subprocess",
        "os",
        "io",
        "pathlib",
        "random",
        "secrets",
        "uuid",
        "time",
        "datetime",
    },
    "events": {"domain", "projections", "service", "redis", "litestar", "structlog"},
    "projections": {"service", "litestar"},
}
# events/schema is pure too: the domain imports it.
FORBIDDEN["events/schema"] = FORBIDDEN["domain"] | {"events.store", "events.codec"}


# service/ by capability, in floors: a package may import only the service packages named
# here (those below it), never one above or beside it that is not listed.
_BASE = {"contract", "ops"}
SERVICE_FLOORS: dict[str, set[str]] = {
    "contract": set(),
    "ops": {"contract"},
    "commands": _BASE,
    "play": _BASE | {"commands"},
    "live": _BASE | {"play"},
    "read": _BASE | {"play"},
    "referee": _BASE | {"commands", "play"},
    "bots": _BASE | {"commands", "play"},
    "audit": _BASE | {"play"},
    "tournaments": _BASE | {"commands", "play", "live"},
    "web": set(),
}
SERVICE_FLOORS["http"] = set(SERVICE_FLOORS) - {"http"}
SERVICE_FLOORS["cli"] = set(SERVICE_FLOORS) - {"cli"}


def imported_modules(path: Path) -> set[str]:
    tree = ast.parse(path.read_text(), filename=str(path))
    found: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            found.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            found.add(node.module)
    return found


def violations(package: str) -> list[str]:
    rules = FORBIDDEN[package]
    bad = []
    for path in sorted((ROOT / package).rglob("*.py")):
        for module in imported_modules(path):
            if any(module == rule or module.startswith(rule + ".") for rule in rules):
                bad.append(f"{path.relative_to(ROOT)} imports {module}")
    return bad


@pytest.mark.parametrize("package", sorted(FORBIDDEN))
def test_layer_imports_nothing_it_must_not(package: str) -> None:
    assert (ROOT / package).is_dir()
    assert violations(package) == []


def test_the_checker_catches_a_forbidden_import(tmp_path: Path) -> None:
    module = tmp_path / "bad.py"
    module.write_text("import random\nfrom psycopg import sql\nfrom . import sibling\n")
    assert imported_modules(module) == {"random", "psycopg"}


def upward_imports() -> list[str]:
    """Each import of one service package by another that its floor does not allow."""
    bad = []
    for path in sorted((ROOT / "service").rglob("*.py")):
        package = path.relative_to(ROOT / "service").parts[0]
        if package.endswith(".py"):
            continue  # service/__init__.py names nothing
        allowed = SERVICE_FLOORS[package] | {package}
        for module in imported_modules(path):
            parts = module.split(".")
            if parts[0] == "service" and len(parts) > 1 and parts[1] not in allowed:
                bad.append(f"{path.relative_to(ROOT)} ({package}) imports {module}")
    return bad


def test_service_imports_only_the_floors_below() -> None:
    packages = {p.name for p in (ROOT / "service").iterdir() if (p / "__init__.py").exists()}
    assert packages <= set(SERVICE_FLOORS), f"no floor for {packages - set(SERVICE_FLOORS)}"
    assert upward_imports() == []


def test_every_service_package_says_what_it_holds() -> None:
    for init in sorted((ROOT / "service").rglob("__init__.py")):
        assert ast.get_docstring(ast.parse(init.read_text())), f"{init} has no docstring"


# Files a reader can hold (STYLE.md): no source file outside tests/ passes this many lines.
MAX_LINES = 420
_NOT_SOURCE = {"tests", ".venv", "venv", "__pycache__", "node_modules", "build", "dist"}


def oversized(root: Path) -> dict[str, int]:
    """{path: lines} of each Python file under `root`, outside tests/ and the environment,
    that passes MAX_LINES."""
    found = {}
    for path in sorted(root.rglob("*.py")):
        parts = path.relative_to(root).parts
        if any(part in _NOT_SOURCE or part.startswith(".") for part in parts[:-1]):
            continue
        lines = len(path.read_text().splitlines())
        if lines > MAX_LINES:
            found[path.relative_to(root).as_posix()] = lines
    return found


def test_no_source_file_passes_the_bound() -> None:
    assert oversized(ROOT) == {}, "split by job"


def test_the_size_check_finds_a_long_file_outside_tests(tmp_path: Path) -> None:
    for where, lines in {
        "pkg/long.py": MAX_LINES + 1,
        "pkg/held.py": MAX_LINES,
        "tests/test_long.py": MAX_LINES + 5,
        ".venv/lib/site.py": MAX_LINES + 5,
    }.items():
        path = tmp_path / where
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text("x = 1\n" * lines)
    assert oversized(tmp_path) == {"pkg/long.py": MAX_LINES + 1}
