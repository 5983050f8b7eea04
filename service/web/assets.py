"""The page files, each named by a digest of its content so that a browser may keep it for
good: a changed file is a new name, and the pages (never cached) name the new one.

JavaScript modules import each other by relative name (`./api.js`); those names are
rewritten to the hashed ones before the importer is hashed, so that a changed module also
renames every module that imports it, all the way up to the page."""

from __future__ import annotations

import hashlib
import re
from dataclasses import dataclass
from functools import cache
from pathlib import Path

STATIC = Path(__file__).resolve().parent / "static"
PREFIX = "/static/"
PAGES = (
    "lobby.html",
    "table.html",
    "replay.html",
    "standings.html",
    "organise.html",
    "verify.html",
)
_TYPES = {
    ".js": "text/javascript; charset=utf-8",
    ".css": "text/css; charset=utf-8",
    ".svg": "image/svg+xml",
    ".html": "text/html; charset=utf-8",
}
_IMPORT = re.compile(r"""(from\s+|import\s*\(\s*|import\s+)(["'])\./([\w-]+\.js)\2""")
_PLACEHOLDER = re.compile(r"\{\{([\w.-]+)\}\}")


@dataclass(frozen=True)
class Asset:
    name: str  # as served: stem.digest.ext
    body: bytes
    media_type: str


@dataclass(frozen=True)
class Bundle:
    assets: dict[str, Asset]  # by served name
    pages: dict[str, bytes]  # by page file name, with hashed names filled in


def hashed_name(source: str, body: bytes) -> str:
    stem, _, ext = source.rpartition(".")
    return f"{stem}.{hashlib.sha256(body).hexdigest()[:16]}.{ext}"


def build(directory: Path = STATIC) -> Bundle:
    """Every file of `directory` under its hashed name, and the pages naming them."""
    served: dict[str, str] = {}  # source name -> served name
    assets: dict[str, Asset] = {}

    def serve(source: str, seen: tuple[str, ...] = ()) -> str:
        if source in served:
            return served[source]
        if source in seen:
            raise ValueError(f"import cycle through {source}")
        body = (directory / source).read_bytes()
        if source.endswith(".js"):
            text = _IMPORT.sub(
                lambda m: f"{m[1]}{m[2]}./{serve(m[3], (*seen, source))}{m[2]}",
                body.decode(),
            )
            body = text.encode()
        name = hashed_name(source, body)
        assets[name] = Asset(name, body, _TYPES[Path(source).suffix])
        served[source] = name
        return name

    for path in sorted(directory.iterdir()):
        if path.is_file() and path.name not in PAGES and path.suffix in _TYPES:
            serve(path.name)
    pages = {
        page: _PLACEHOLDER.sub(
            lambda m: PREFIX + serve(m[1]), (directory / page).read_text()
        ).encode()
        for page in PAGES
    }
    return Bundle(assets, pages)


@cache
def bundle() -> Bundle:
    """Built once per process: the files do not change under a running service."""
    return build()
