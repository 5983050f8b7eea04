"""Settings come from the environment once; a value the service cannot use names its variable."""

from __future__ import annotations

from pathlib import Path

import pytest

from service.ops.settings import Settings, SettingsError

pytestmark = pytest.mark.unit


def test_an_empty_environment_gives_the_defaults() -> None:
    assert Settings.from_env({}) == Settings()


def test_every_variable_reaches_its_field() -> None:
    settings = Settings.from_env(
        {
            "DATABASE_URL": "postgresql://db/fairway",
            "REDIS_URL": "redis://cache",
            "FAIRWAY_DATA_DIR": "/srv/fairway",
            "FAIRWAY_HOST": "0.0.0.0",
            "FAIRWAY_PORT": "9000",
            "FAIRWAY_WORKERS": "4",
            "FAIRWAY_LOG_LEVEL": "WARNING",
            "FAIRWAY_LOG_FORMAT": "Console",
            "FAIRWAY_MAX_BODY_BYTES": "2048",
            "FAIRWAY_RATE_LIMIT_PER_SECOND": "12.5",
            "FAIRWAY_RATE_LIMIT_BURST": "25",
            "FAIRWAY_TRUSTED_PROXIES": "10.0.0.0/8, ::1",
            "FAIRWAY_CORS_ORIGINS": "https://play.example, http://localhost:3000/",
            "FAIRWAY_POOL_SIZE": "20",
            "FAIRWAY_GROUP_COMMIT": "off",
            "FAIRWAY_DB_TIMEOUT": "0.5",
            "FAIRWAY_HEADER_TIMEOUT": "3",
            "FAIRWAY_KEEP_ALIVE_TIMEOUT": "7.5",
            "FAIRWAY_MAX_CONNECTIONS": "100",
            "FAIRWAY_MAX_CONNECTIONS_PER_CLIENT": "50",
            "FAIRWAY_MAX_STREAMS_PER_CLIENT": "8",
            "FAIRWAY_BODY_TIMEOUT": "4.5",
            "FAIRWAY_BODY_MIN_RATE": "2048",
            "FAIRWAY_SSE_LIFETIME": "120",
            "FAIRWAY_CACHE_EVENTS": "1000",
            "FAIRWAY_CACHE_FINISHED_GAMES": "0",
        }
    )
    assert settings == Settings(
        database_url="postgresql://db/fairway",
        redis_url="redis://cache",
        data_dir=Path("/srv/fairway"),
        host="0.0.0.0",
        port=9000,
        workers=4,
        log_level="warning",
        log_format="console",
        max_body_bytes=2048,
        rate_limit_per_second=12.5,
        rate_limit_burst=25,
        trusted_proxies=("10.0.0.0/8", "::1"),
        cors_origins=("https://play.example", "http://localhost:3000"),
        pool_size=20,
        group_commit=False,
        db_timeout=0.5,
        header_timeout=3.0,
        keep_alive_timeout=7.5,
        max_connections=100,
        max_connections_per_client=50,
        max_streams_per_client=8,
        body_timeout=4.5,
        body_min_rate=2048,
        sse_lifetime=120.0,
        cache_events=1000,
        cache_finished_games=0,
    )


def test_the_admin_key_guards_tournaments_only_when_set() -> None:
    assert Settings.from_env({}).admin_key is None
    assert Settings.from_env({"FAIRWAY_ADMIN_KEY": "  "}).admin_key is None
    assert Settings.from_env({"FAIRWAY_ADMIN_KEY": " s3cret "}).admin_key == "s3cret"


def test_a_blank_value_counts_as_unset() -> None:
    assert Settings.from_env({"FAIRWAY_PORT": "  ", "DATABASE_URL": ""}) == Settings()


@pytest.mark.parametrize(
    ("name", "value", "message"),
    [
        ("FAIRWAY_PORT", "abc", "FAIRWAY_PORT must be an integer, not 'abc'"),
        ("FAIRWAY_PORT", "70000", "FAIRWAY_PORT must be between 0 and 65535, not 70000"),
        ("FAIRWAY_PORT", "-1", "FAIRWAY_PORT must be between 0 and 65535, not -1"),
        ("FAIRWAY_WORKERS", "0", "FAIRWAY_WORKERS must be at least 1, not 0"),
        ("FAIRWAY_WORKERS", "1.5", "FAIRWAY_WORKERS must be an integer, not '1.5'"),
        (
            "FAIRWAY_LOG_FORMAT",
            "xml",
            "FAIRWAY_LOG_FORMAT must be one of json, console, auto, not 'xml'",
        ),
        (
            "FAIRWAY_LOG_LEVEL",
            "loud",
            "FAIRWAY_LOG_LEVEL must be one of debug, info, warning, error, critical, not 'loud'",
        ),
        ("FAIRWAY_DB_TIMEOUT", "0", "FAIRWAY_DB_TIMEOUT must be a number greater than 0, not '0'"),
        ("FAIRWAY_DB_TIMEOUT", "soon", "FAIRWAY_DB_TIMEOUT must be a number, not 'soon'"),
        (
            "FAIRWAY_HEADER_TIMEOUT",
            "nan",
            "FAIRWAY_HEADER_TIMEOUT must be a number greater than 0, not 'nan'",
        ),
        (
            "FAIRWAY_KEEP_ALIVE_TIMEOUT",
            "-5",
            "FAIRWAY_KEEP_ALIVE_TIMEOUT must be a number greater than 0, not '-5'",
        ),
        (
            "FAIRWAY_RATE_LIMIT_PER_SECOND",
            "inf",
            "FAIRWAY_RATE_LIMIT_PER_SECOND must be a number greater than 0, not 'inf'",
        ),
        ("FAIRWAY_RATE_LIMIT_BURST", "0", "FAIRWAY_RATE_LIMIT_BURST must be at least 1, not 0"),
        ("FAIRWAY_MAX_BODY_BYTES", "0", "FAIRWAY_MAX_BODY_BYTES must be at least 1, not 0"),
        ("FAIRWAY_POOL_SIZE", "0", "FAIRWAY_POOL_SIZE must be at least 1, not 0"),
        ("FAIRWAY_MAX_CONNECTIONS", "0", "FAIRWAY_MAX_CONNECTIONS must be at least 1, not 0"),
        (
            "FAIRWAY_MAX_CONNECTIONS_PER_CLIENT",
            "0",
            "FAIRWAY_MAX_CONNECTIONS_PER_CLIENT must be at least 1, not 0",
        ),
        (
            "FAIRWAY_MAX_STREAMS_PER_CLIENT",
            "many",
            "FAIRWAY_MAX_STREAMS_PER_CLIENT must be an integer, not 'many'",
        ),
        (
            "FAIRWAY_BODY_TIMEOUT",
            "0",
            "FAIRWAY_BODY_TIMEOUT must be a number greater than 0, not '0'",
        ),
        ("FAIRWAY_BODY_MIN_RATE", "0.5", "FAIRWAY_BODY_MIN_RATE must be an integer, not '0.5'"),
        (
            "FAIRWAY_SSE_LIFETIME",
            "inf",
            "FAIRWAY_SSE_LIFETIME must be a number greater than 0, not 'inf'",
        ),
        (
            "FAIRWAY_TRUSTED_PROXIES",
            "10.0.0.0/8, proxy.local",
            "FAIRWAY_TRUSTED_PROXIES must hold IP addresses or CIDRs, not 'proxy.local'",
        ),
        (
            "FAIRWAY_CORS_ORIGINS",
            "https://play.example/app",
            "FAIRWAY_CORS_ORIGINS must hold origins such as https://play.example, "
            "not 'https://play.example/app'",
        ),
        (
            "FAIRWAY_CORS_ORIGINS",
            "play.example",
            "FAIRWAY_CORS_ORIGINS must hold origins such as https://play.example, "
            "not 'play.example'",
        ),
    ],
)
def test_a_value_the_service_cannot_use_names_its_variable(
    name: str, value: str, message: str
) -> None:
    with pytest.raises(SettingsError) as raised:
        Settings.from_env({name: value})
    assert raised.value.name == name
    assert str(raised.value) == message


def test_cors_origins_accept_any_with_a_star_and_none_by_default() -> None:
    assert Settings.from_env({"FAIRWAY_CORS_ORIGINS": "*"}).cors_origins == ("*",)
    assert Settings.from_env({"FAIRWAY_CORS_ORIGINS": " , "}).cors_origins == ()
    assert Settings().cors_origins == ()


def test_the_referee_runs_by_default_and_may_be_turned_off() -> None:
    assert Settings.from_env({}).referee is True
    off = Settings.from_env({"FAIRWAY_REFEREE": "off", "FAIRWAY_REFEREE_TICK": "0.25"})
    assert (off.referee, off.referee_tick) == (False, 0.25)
    with pytest.raises(SettingsError) as raised:
        Settings.from_env({"FAIRWAY_REFEREE_TICK": "0"})
    assert raised.value.name == "FAIRWAY_REFEREE_TICK"


def test_bots_play_by_default_with_a_pause_and_a_bound_that_may_be_set() -> None:
    default = Settings.from_env({})
    assert (default.bots, default.bot_think, default.bot_concurrency) == (True, 0.8, 8)
    env = {"FAIRWAY_BOTS": "off", "FAIRWAY_BOT_THINK": "0", "FAIRWAY_BOT_CONCURRENCY": "2"}
    chosen = Settings.from_env(env)
    assert (chosen.bots, chosen.bot_think, chosen.bot_concurrency) == (False, 0.0, 2)
    for name, value in (("FAIRWAY_BOT_THINK", "-1"), ("FAIRWAY_BOT_CONCURRENCY", "0")):
        with pytest.raises(SettingsError) as raised:
            Settings.from_env({name: value})
        assert raised.value.name == name


def test_the_round_keeper_runs_by_default_and_may_be_turned_off() -> None:
    assert Settings.from_env({}).round_keeper is True
    assert Settings.from_env({"FAIRWAY_ROUND_KEEPER": "off"}).round_keeper is False


def test_the_background_consumers_follow_the_leader_by_default() -> None:
    assert Settings.from_env({}).background == "leader"
    for mode in ("always", "Never", "leader"):
        assert Settings.from_env({"FAIRWAY_BACKGROUND": mode}).background == mode.lower()
    with pytest.raises(SettingsError) as raised:
        Settings.from_env({"FAIRWAY_BACKGROUND": "sometimes"})
    assert raised.value.name == "FAIRWAY_BACKGROUND"
    assert "leader, always, never" in str(raised.value)


def test_the_limits_per_client_have_defaults_that_leave_room_for_others() -> None:
    settings = Settings.from_env({})
    assert settings.max_connections_per_client < settings.max_connections
    assert settings.max_streams_per_client < settings.max_connections_per_client
    assert (settings.body_timeout, settings.body_min_rate) == (10.0, 1024)
    assert settings.sse_lifetime == 600.0


def test_the_feed_replica_is_read_only_with_a_primary_to_follow() -> None:
    settings = Settings.from_env(
        {"DATABASE_URL": "postgresql://primary/f", "FAIRWAY_FEED_DATABASE_URL": "postgresql://r/f"}
    )
    assert settings.feed_database_url == "postgresql://r/f"
    assert Settings.from_env({"DATABASE_URL": "postgresql://primary/f"}).feed_database_url is None
    with pytest.raises(SettingsError, match="FAIRWAY_FEED_DATABASE_URL needs DATABASE_URL"):
        Settings.from_env({"FAIRWAY_FEED_DATABASE_URL": "postgresql://r/f"})
