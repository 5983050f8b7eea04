"""The app builds its OpenAPI document when first asked for it, not at start (built, it holds
about 4 MB for the process's life in every worker), and serves it complete: the committed
document (`fairway openapi --check` compares that one with the code's)."""

from __future__ import annotations

import json
from pathlib import Path

import httpx
import pytest
from litestar._openapi.plugin import OpenAPIPlugin

from service.cli.openapi import PATH
from service.http.app import create_app
from service.ops.settings import Settings

pytestmark = pytest.mark.integration


async def test_the_document_is_built_on_the_first_request_for_it_and_served_complete(
    tmp_path: Path,
) -> None:
    app = create_app(Settings(data_dir=tmp_path, log_level="warning"))
    plugin = app.plugins.get(OpenAPIPlugin)
    async with app.lifespan():
        transport = httpx.ASGITransport(app=app)
        async with httpx.AsyncClient(transport=transport, base_url="http://t") as client:
            (await client.get("/health")).raise_for_status()
            assert plugin._openapi is None
            served = (await client.get("/schema/openapi.json")).json()
            assert plugin._openapi is not None
            again = (await client.get("/schema/openapi.json")).json()
    assert served == json.loads(PATH.read_text())
    assert again == served
