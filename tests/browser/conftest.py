"""The pages in a real browser: Debian's chromium (`/usr/bin/chromium`, installed by
.ci/run where missing) driven by Playwright, against a real Fairway server on PostgreSQL
with bots that do not pause (FAIRWAY_BOT_THINK=0). Playwright never downloads a browser."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
from playwright.sync_api import Browser, Page, sync_playwright

from events.migrate import migrate
from service.ops.settings import Settings
from tests.api.server import running_server
from tests.support.services import throwaway_database

CHROMIUM = "/usr/bin/chromium"
SHOTS = Path(__file__).resolve().parents[2] / "var" / "screenshots"
SIZES = {"desktop": (1280, 800), "phone": (390, 844)}


@pytest.fixture(scope="module")
def web_settings(
    postgres_server_url: str, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[Settings]:
    with throwaway_database(postgres_server_url, "fairway_web") as url:
        migrate(url)
        yield Settings(
            database_url=url,
            data_dir=Path(tmp_path_factory.mktemp("fairway-web")),
            log_level="warning",
            log_format="json",
            rate_limit_per_second=100_000.0,
            rate_limit_burst=100_000,
            bot_think=0.0,
        )


@pytest.fixture(scope="module")
def base(web_settings: Settings) -> Iterator[str]:
    with running_server(web_settings) as url:
        yield url


@pytest.fixture(scope="module")
def browser() -> Iterator[Browser]:
    with sync_playwright() as playwright:
        launched = playwright.chromium.launch(
            executable_path=CHROMIUM, args=["--no-sandbox", "--disable-dev-shm-usage"]
        )
        yield launched
        launched.close()


@pytest.fixture
def page(browser: Browser, base: str) -> Iterator[Page]:
    context = browser.new_context(base_url=base, viewport={"width": 1280, "height": 800})
    opened = context.new_page()
    errors: list[str] = []
    opened.on("pageerror", lambda error: errors.append(str(error)))
    yield opened
    context.close()
    assert errors == [], errors


def screenshots(page: Page, name: str) -> None:
    """The page as it is, at desktop and phone sizes, into var/screenshots (gitignored)."""
    SHOTS.mkdir(parents=True, exist_ok=True)
    for size, (width, height) in SIZES.items():
        page.set_viewport_size({"width": width, "height": height})
        page.screenshot(path=str(SHOTS / f"{name}-{size}.png"), full_page=True)
    page.set_viewport_size({"width": 1280, "height": 800})
