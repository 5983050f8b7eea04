"""The commitment check: were the deals fair? (domain/fairness.py, docs/SHUFFLE.md).

For a v1 hand, the seed revealed at its end is the one committed to at its deal; for a v2
hand, the server seed is the next link of the seed chain committed before any seat existed,
the seat seeds are those the seats set, and the hand's seed is their HMAC. The domain's
`check_deals` decides all of it; here its findings become the audit's failures, named by
event version and field.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from domain.fairness import check_deals
from service.audit.report import Failure


def deal_failures(events: Sequence[tuple[int, Any]]) -> list[Failure]:
    """Every finding against a fair deal in (version, event) pairs from version 1."""
    return [
        Failure("commitments", finding.version, f"data.{finding.field}", finding.message)
        for finding in check_deals(events)
    ]
