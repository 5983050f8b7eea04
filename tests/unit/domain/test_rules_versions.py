"""The rules version bound into every game (domain/rules_versions.py): new games are
created under their variant's newest version, a game from before the field is judged as
version 1, an unknown version is refused by name; and each version's rules record is pinned,
so a changed record with an unchanged version fails here (bump the version instead)."""

from __future__ import annotations

import hashlib

import msgspec
import pytest

from domain.rules_versions import IMPLEMENTED, current, refusal
from domain.variants import DECIDERS, decider_for
from events.schema.common import GameOptions

pytestmark = pytest.mark.unit

PINNED = {
    "hang-ten/1": "8e1cbb6b2ad3c0165fdf8cf972f9a528febf36133d9a9969c19ff8720add48b1",
    "tens/1": "f9dbd133da6dffa156c0d082f7f2448fa6e55d305915215919059a46274975f0",
    "golf/1": "a6e22cf12f163a463e864801ce25c12282ba45de4a6ed955a84cf2da6dceee44",
    "basketball/1": "e9c8c82b8efe1093cbe877f44b4cfb8516875d9dd7acaed4b748f13aaf4268d4",
    "tens-shedding/1": "b88ac39d73f7287449de485c1fa8bd7eed49098cd2f170fee24d8e45ad896121",
}
"""SHA-256 of each version's rules record as JSON (Tens-shedding's with default options)."""


def record_digest(variant: str) -> str:
    decider = decider_for(variant)
    rules = getattr(decider, "rules", None)
    if rules is None:
        rules = decider.initial_state(2, GameOptions()).rules
    return hashlib.sha256(msgspec.json.encode(rules)).hexdigest()


def test_every_variant_has_a_current_version_that_it_implements() -> None:
    assert set(IMPLEMENTED) == set(DECIDERS)
    for variant in DECIDERS:
        assert current(variant) == f"{variant}/1"
        assert refusal(variant, current(variant)) is None


def test_a_game_from_before_the_field_is_judged() -> None:
    assert refusal("golf", "") is None


@pytest.mark.parametrize(("variant", "version"), [("golf", "golf/2"), ("golf", "basketball/1")])
def test_an_unknown_version_is_refused_by_name(variant: str, version: str) -> None:
    refused = refusal(variant, version)
    assert refused is not None
    assert repr(version) in refused
    assert "does not implement" in refused
    assert "golf/1" in refused  # and says what it does implement


def test_each_versions_rules_record_is_pinned() -> None:
    found = {current(variant): record_digest(variant) for variant in DECIDERS}
    assert found == PINNED
