"""The commitment check of a finished hand: the seed revealed at its end is the one dealt,
and SHA-256 of it is the commitment published at the deal (docs/SHUFFLE.md, v1 deals).

One function, so that the fuller check of the `fair` work (server and seat seeds) can take
its place without touching the audit's walk.
"""

from __future__ import annotations

import hashlib

from events.schema.common import HandDealt, HandEnded
from service.audit.report import Failure


def _sha256(seed_hex: str) -> str | None:
    try:
        return hashlib.sha256(bytes.fromhex(seed_hex)).hexdigest()
    except ValueError:
        return None


def check_commitment(
    dealt_version: int, dealt: HandDealt, ended_version: int, ended: HandEnded
) -> Failure | None:
    """The first thing that does not hold, named at the event and field that is wrong when
    one thing alone was altered (the other two still agree)."""
    committed = dealt.commitment
    if dealt.seed == ended.seed and _sha256(ended.seed) == committed:
        return None
    if dealt.seed == ended.seed:
        return Failure(
            "commitments",
            dealt_version,
            "data.commitment",
            f"is not SHA-256 of the hand's seed (expected {_sha256(ended.seed)}, "
            f"found {committed})",
        )
    if _sha256(ended.seed) == committed:
        return Failure(
            "commitments",
            dealt_version,
            "data.seed",
            f"differs from the seed revealed at version {ended_version}, which matches the "
            f"commitment (expected {ended.seed}, found {dealt.seed})",
        )
    if _sha256(dealt.seed) == committed:
        return Failure(
            "commitments",
            ended_version,
            "data.seed",
            f"revealed is not the seed committed to at version {dealt_version} "
            f"(expected {dealt.seed}, found {ended.seed})",
        )
    return Failure(
        "commitments",
        dealt_version,
        "data.commitment",
        f"matches neither the seed dealt nor the seed revealed at version {ended_version}",
    )
