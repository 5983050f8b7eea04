"""Receipts checked against the stored history (filled in once the `fair` work lands)."""

from __future__ import annotations

from collections.abc import Sequence

from service.audit.report import CheckResult


def receipt_checks(*files: bytes, keys: Sequence[str] = ()) -> tuple[CheckResult, ...]:
    return ()
