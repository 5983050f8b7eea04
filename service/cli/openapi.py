"""`fairway openapi`: write the OpenAPI document, or check that the committed one is current."""

from __future__ import annotations

import difflib
import json
import sys
from pathlib import Path

from service.ops.settings import Settings

PATH = Path(__file__).resolve().parents[2] / "openapi" / "openapi.json"


def generate() -> str:
    from service.http.app import create_app

    app = create_app(Settings(log_format="json", log_level="warning"))
    return json.dumps(app.openapi_schema.to_schema(), indent=2, sort_keys=True) + "\n"


def write() -> int:
    PATH.parent.mkdir(exist_ok=True)
    PATH.write_text(generate())
    print(f"wrote {PATH}")
    return 0


def check() -> int:
    current = generate()
    committed = PATH.read_text() if PATH.exists() else ""
    if current == committed:
        print(f"{PATH.name} is current")
        return 0
    diff = difflib.unified_diff(
        committed.splitlines(),
        current.splitlines(),
        "openapi.json (committed)",
        "openapi.json (code)",
        lineterm="",
    )
    print("\n".join(list(diff)[:80]), file=sys.stderr)
    print(
        "the committed OpenAPI document differs from the code: run `fairway openapi`",
        file=sys.stderr,
    )
    return 1
