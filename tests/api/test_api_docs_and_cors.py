"""The API pages work offline, the document names no server address, and browsers on the
configured origins (none by default) may call the API and read the headers clients need."""

from __future__ import annotations

import re
from collections.abc import Iterator

import httpx
import msgspec
import pytest

from service.ops.settings import Settings
from tests.api.server import running_server

pytestmark = pytest.mark.api

ALLOWED = "https://play.example"
OTHER = "https://elsewhere.example"
PREFLIGHT = {
    "Access-Control-Request-Method": "POST",
    "Access-Control-Request-Headers": "authorization, content-type, idempotency-key, if-match",
}


@pytest.fixture(scope="module")
def cors(api_settings: Settings) -> Iterator[httpx.Client]:
    """A second server, with `ALLOWED` as its one CORS origin."""
    settings = msgspec.structs.replace(api_settings, cors_origins=(ALLOWED,))
    with running_server(settings) as base, httpx.Client(base_url=base, timeout=20) as client:
        yield client


def referenced(html: str) -> list[str]:
    return re.findall(r"""(?:src|href)\s*=\s*["']([^"']+)["']""", html)


def cors_headers(response: httpx.Response) -> dict[str, str]:
    return {k: v for k, v in response.headers.items() if k.startswith("access-control-")}


def listed(value: str) -> set[str]:
    return {item.strip().lower() for item in value.split(",")}


def test_the_api_page_loads_only_assets_the_service_serves_itself(http: httpx.Client) -> None:
    page = http.get("/schema/swagger")
    assert page.status_code == 200
    assert page.headers["content-type"].startswith("text/html")
    assert not re.search(r"https?://", page.text), "the page reaches out to another host"
    urls = referenced(page.text)
    assert {url.rsplit("/", 1)[-1] for url in urls} >= {
        "swagger-ui-bundle.js",
        "swagger-ui-standalone-preset.js",
        "swagger-ui.css",
    }
    kinds = {".js": "javascript", ".css": "text/css", ".png": "image/png"}
    for url in urls:
        assert url.startswith("/schema/assets/"), url
        asset = http.get(url)
        assert asset.status_code == 200, url
        kind = kinds[url[url.rindex(".") :]]
        assert kind in asset.headers["content-type"], (url, asset.headers["content-type"])
        assert asset.content


def test_the_schema_root_and_docs_lead_to_the_api_page(http: httpx.Client) -> None:
    assert "SwaggerUIBundle" in http.get("/schema").text
    moved = http.get("/docs")
    assert moved.status_code in (301, 302, 307, 308)
    assert moved.headers["location"] == "/schema/swagger"


def test_an_unknown_asset_is_not_found(http: httpx.Client) -> None:
    assert http.get("/schema/assets/no-such-file.js").status_code == 404


def test_the_served_document_names_no_server_address(http: httpx.Client) -> None:
    document = http.get("/schema/openapi.json").json()
    assert [server["url"] for server in document["servers"]] == ["/"]


def test_a_preflight_from_an_allowed_origin_gets_the_cors_headers(cors: httpx.Client) -> None:
    answer = cors.options("/games", headers={"Origin": ALLOWED, **PREFLIGHT})
    assert answer.status_code in (200, 204)
    headers = cors_headers(answer)
    assert headers["access-control-allow-origin"] == ALLOWED
    assert "post" in listed(headers["access-control-allow-methods"])
    assert listed(headers["access-control-allow-headers"]) >= {
        "authorization",
        "content-type",
        "idempotency-key",
        "if-match",
        "if-none-match",
        "last-event-id",
    }


def test_an_allowed_origin_may_read_the_headers_clients_need(cors: httpx.Client) -> None:
    answer = cors.get("/variants", headers={"Origin": ALLOWED})
    assert answer.status_code == 200
    assert answer.headers["access-control-allow-origin"] == ALLOWED
    assert listed(answer.headers["access-control-expose-headers"]) >= {
        "etag",
        "location",
        "retry-after",
        "x-request-id",
    }


def test_another_origin_gets_no_cors_headers(cors: httpx.Client) -> None:
    preflight = cors.options("/games", headers={"Origin": OTHER, **PREFLIGHT})
    assert cors_headers(preflight) == {}
    assert preflight.status_code >= 400
    # Without Access-Control-Allow-Origin the browser keeps the answer from the page.
    simple = cors.get("/variants", headers={"Origin": OTHER})
    assert "access-control-allow-origin" not in simple.headers


def test_without_configured_origins_no_origin_gets_cors_headers(http: httpx.Client) -> None:
    preflight = http.options("/games", headers={"Origin": ALLOWED, **PREFLIGHT})
    assert cors_headers(preflight) == {}
    assert cors_headers(http.get("/variants", headers={"Origin": ALLOWED})) == {}
