"""The pages under `/`: served with a strict Content-Security-Policy and never cached, their
files named by content and cached for good; no page names a token or runs inline script."""

from __future__ import annotations

import re
from pathlib import Path

import httpx
import pytest

from service.web.assets import STATIC, build

pytestmark = pytest.mark.api

ASSET = re.compile(r'(?:src|href)="(/static/[\w.-]+)"')


@pytest.mark.parametrize("path", ["/", "/play/0123456789abcdef", "/watch/0123456789abcdef"])
def test_a_page_is_served_with_a_strict_policy(http: httpx.Client, path: str) -> None:
    page = http.get(path)
    assert page.status_code == 200
    assert page.headers["content-type"].startswith("text/html")
    assert page.headers["cache-control"] == "no-cache"
    policy = page.headers["content-security-policy"]
    assert "script-src 'self';" in policy
    assert "unsafe-inline" not in policy
    assert "unsafe-eval" not in policy
    assert "frame-ancestors 'none'" in policy
    assert page.headers["x-content-type-options"] == "nosniff"
    assert "<script>" not in page.text, "no inline script"
    assert not re.search(r"\son\w+\s*=", page.text), "no inline handler"
    named = ASSET.findall(page.text)
    assert named, "the page names its script and style"
    for target in named:
        asset = http.get(target)
        assert asset.status_code == 200
        assert asset.headers["cache-control"] == "public, max-age=31536000, immutable"
        assert asset.headers["content-security-policy"] == policy


def test_every_module_import_names_a_hashed_file_that_is_served(http: httpx.Client) -> None:
    bundle = build()
    for name, asset in bundle.assets.items():
        assert re.fullmatch(r"[\w-]+\.[0-9a-f]{16}\.(js|css)", name)
        assert http.get(f"/static/{name}").content == asset.body
        if name.endswith(".js"):
            for imported in re.findall(r'from "\./([\w.-]+)"', asset.body.decode()):
                assert imported in bundle.assets, f"{name} imports {imported}"


def test_an_unknown_file_is_a_problem(http: httpx.Client) -> None:
    missing = http.get("/static/lobby.0000000000000000.js")
    assert missing.status_code == 404
    assert missing.json()["code"] == "not_found"
    assert http.get("/play/not-a-game").status_code == 400


def test_a_changed_module_renames_its_importers(tmp_path: Path) -> None:
    for source in STATIC.iterdir():
        (tmp_path / source.name).write_bytes(source.read_bytes())
    before = build(tmp_path)
    (tmp_path / "cards.js").write_text((tmp_path / "cards.js").read_text() + "\n// changed\n")
    after = build(tmp_path)
    renamed = set(before.assets) - set(after.assets)
    stems = {name.split(".")[0] for name in renamed}
    assert {"cards", "grid", "shedding", "table"} <= stems
    assert "api" not in stems
    assert "lobby" not in stems
    assert after.pages["table.html"] != before.pages["table.html"]
    assert after.pages["lobby.html"] == before.pages["lobby.html"]
