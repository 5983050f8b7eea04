"""The projection settings: FAIRWAY_REDIS_PREFIX and FAIRWAY_PROJECTOR_INLINE."""

from __future__ import annotations

import pytest

from service.ops.settings import Settings, SettingsError

pytestmark = pytest.mark.unit


def test_the_defaults_keep_the_fw_prefix_and_no_inline_projector_beside_redis() -> None:
    settings = Settings.from_env({})
    assert (settings.redis_prefix, settings.projector_inline, settings.redis_url) == (
        "fw",
        False,
        None,
    )


@pytest.mark.parametrize(
    ("text", "value"), [("true", True), ("YES", True), ("1", True), ("off", False), ("0", False)]
)
def test_projector_inline_reads_the_usual_spellings(text: str, value: bool) -> None:
    assert Settings.from_env({"FAIRWAY_PROJECTOR_INLINE": text}).projector_inline is value


@pytest.mark.parametrize(
    ("name", "text", "message"),
    [
        ("FAIRWAY_PROJECTOR_INLINE", "sometimes", "must be true or false"),
        ("FAIRWAY_REDIS_PREFIX", "fw:x", "must be 1 to 32 letters"),
        ("FAIRWAY_REDIS_PREFIX", "{fw}", "must be 1 to 32 letters"),
        ("FAIRWAY_REDIS_PREFIX", "a*", "must be 1 to 32 letters"),
        ("FAIRWAY_REDIS_PREFIX", "x" * 33, "must be 1 to 32 letters"),
    ],
)
def test_a_bad_value_names_its_variable(name: str, text: str, message: str) -> None:
    with pytest.raises(SettingsError) as error:
        Settings.from_env({name: text})
    assert error.value.name == name
    assert message in str(error.value)
