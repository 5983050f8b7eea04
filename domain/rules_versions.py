"""The rules version a game is played under, and the versions this code can judge.

A game verified years from now must be decided by the rules it was played under, not by
whatever the code says then. So `game.created` names the version of the rules engine that
deals and scores it (`rules_version`): one string per variant, `<variant>/<n>`, standing for
the variant's rules record (domain/grid/rules.py, domain/shedding/rules.py), the shuffle and
deal (docs/SHUFFLE.md) and the scoring of RULES.md, all three as this code implements them.
A change to any of them is a new version: the old one stays implemented (its decider kept
beside the new) for as long as games played under it are to be verified, and
`tests/unit/domain/test_rules_versions.py` pins a digest of each version's rules record, so
a changed record with an unchanged version fails there.

Games created before the field existed carry "" and are judged as version 1, the only
rules they could have been played under. A version this code does not list is refused by
name: judging it by other rules would call a fair game foul, or a foul one fair.
"""

from __future__ import annotations

from domain.variants import DECIDERS

IMPLEMENTED: dict[str, tuple[str, ...]] = {name: (f"{name}/1",) for name in DECIDERS}
"""Every rules version this code judges, by variant, oldest first."""


def current(variant: str) -> str:
    """The version a new game of `variant` is created under (the newest)."""
    return IMPLEMENTED[variant][-1]


def refusal(variant: str, version: str) -> str | None:
    """Why a game of `variant` created under `version` cannot be judged here (None: it
    can). "" (a game from before the field) is judged as its variant's version 1."""
    if version == "" or version in IMPLEMENTED.get(variant, ()):
        return None
    known = ", ".join(v for versions in IMPLEMENTED.values() for v in versions)
    return (
        f"the game was played under rules version {version!r}, which this verifier does not "
        f"implement (it implements {known}): judging it by other rules would be wrong, so it "
        "is not judged; verify it with a Fairway that implements that version"
    )
