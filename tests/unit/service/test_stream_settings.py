"""The settings of live streams and spectators: read, defaulted, refused with their name."""

from __future__ import annotations

import pytest

from service.ops.settings import Settings, SettingsError

pytestmark = pytest.mark.unit


def test_streams_are_live_for_spectators_with_a_heartbeat_every_15_s_by_default() -> None:
    assert Settings.from_env({}).spectator_delay == 0
    assert Settings.from_env({}).sse_heartbeat == 15.0


def test_the_variables_reach_their_fields() -> None:
    settings = Settings.from_env({"FAIRWAY_SPECTATOR_DELAY": "3", "FAIRWAY_SSE_HEARTBEAT": "2.5"})
    assert settings.spectator_delay == 3
    assert settings.sse_heartbeat == 2.5


@pytest.mark.parametrize(
    ("name", "value", "message"),
    [
        ("FAIRWAY_SPECTATOR_DELAY", "-1", "must be between 0 and 10000, not -1"),
        ("FAIRWAY_SPECTATOR_DELAY", "two", "must be an integer, not 'two'"),
        ("FAIRWAY_SSE_HEARTBEAT", "0", "must be a number greater than 0, not '0'"),
        ("FAIRWAY_SSE_HEARTBEAT", "inf", "must be a number greater than 0, not 'inf'"),
    ],
)
def test_a_value_the_service_cannot_use_names_its_variable(
    name: str, value: str, message: str
) -> None:
    with pytest.raises(SettingsError) as raised:
        Settings.from_env({name: value})
    assert raised.value.name == name
    assert str(raised.value) == f"{name} {message}"
