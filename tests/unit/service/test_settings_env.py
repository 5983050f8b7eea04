"""The settings the API tests give their own `fairway serve` process arrive whole: what
`to_env` writes, `Settings.from_env` reads back as the same settings."""

from __future__ import annotations

from pathlib import Path

import msgspec
import pytest

from service.ops.settings import Settings
from tests.api.server import instance_settings
from tests.support.settings_env import NO_VARIABLE, to_env

pytestmark = pytest.mark.unit

RECEIPT_KEY = "AAECAwQFBgcICQoLDA0ODxAREhMUFRYXGBkaGxwdHh8="
RETIRED_KEY = "ICEiIyQlJicoKSorLC0uLzAxMjM0NTY3ODk6Ozw9Pj8"


def api_settings(data_dir: Path) -> Settings:
    """As tests/api/conftest.py makes them (it needs fixtures; the values are these)."""
    return Settings(
        database_url="postgresql://postgres@127.0.0.1:5432/fairway_api_0123abcd",
        data_dir=data_dir,
        log_level="warning",
        log_format="json",
        rate_limit_per_second=100_000.0,
        rate_limit_burst=100_000,
        bot_think=0.0,
    )


def every_field_changed() -> Settings:
    """A value other than the default in every field that has a variable."""
    return Settings(
        database_url="postgresql://db/fairway",
        feed_database_url="postgresql://replica/fairway",
        redis_url="redis://cache/3",
        data_dir=Path("/srv/fairway"),
        host="0.0.0.0",
        port=9000,
        workers=3,
        log_level="debug",
        log_format="console",
        max_body_bytes=2048,
        rate_limit_per_second=12.3,
        rate_limit_burst=25,
        trusted_proxies=("10.0.0.0/8", "::1"),
        cors_origins=("https://play.example", "http://localhost:3000"),
        pool_size=20,
        group_commit=False,
        db_timeout=0.1,
        cache_events=7,
        cache_finished_games=0,
        header_timeout=3.0,
        keep_alive_timeout=7.5,
        max_connections=100,
        max_connections_per_client=50,
        max_streams_per_client=4,
        body_timeout=60.0,
        body_min_rate=10,
        sse_lifetime=1.0,
        redis_prefix="fw-test_1",
        projector_inline=True,
        receipt_key=RECEIPT_KEY,
        seed_chain_hands=3,
        receipt_retired_keys=(RETIRED_KEY,),
        sse_heartbeat=0.2,
        spectator_delay=5,
        referee=False,
        referee_tick=0.05,
        bots=False,
        bot_think=1e-3,
        bot_concurrency=2,
        admin_key="sesame",
        round_keeper=False,
        instance="api-tests",
        background="always",
        shutdown_grace=4.0,
    )


def test_the_settings_the_api_tests_use_arrive_whole(tmp_path: Path) -> None:
    shared = api_settings(tmp_path / "api")
    for settings in (
        shared,
        msgspec.structs.replace(shared, round_keeper=False, bots=False),
        msgspec.structs.replace(shared, spectator_delay=3),
        instance_settings("postgresql://postgres@127.0.0.1/other", tmp_path / "b"),
    ):
        assert Settings.from_env(to_env(settings)) == settings


def test_the_defaults_need_no_variable() -> None:
    assert to_env(Settings()) == {}


def test_every_field_with_a_variable_arrives_whole() -> None:
    settings = every_field_changed()
    unchanged = [
        f.name
        for f in msgspec.structs.fields(Settings)
        if getattr(settings, f.name) == getattr(Settings(), f.name)
    ]
    assert set(unchanged) == NO_VARIABLE, "a field with a variable is left out of this test"
    assert Settings.from_env(to_env(settings)) == settings


def test_a_setting_no_variable_carries_is_refused_not_lost() -> None:
    assert Settings.from_env({"FAIRWAY_COMMAND_RETRIES": "9"}).command_retries == 5
    with pytest.raises(ValueError, match="command_retries"):
        to_env(Settings(command_retries=9))
