"""An audit report as lines for an operator's terminal."""

from __future__ import annotations

from collections.abc import Iterator

from service.audit.report import AuditReport, CheckResult


def _check(check: CheckResult) -> str:
    if check.ok:
        return f"ok      {check.name} ({check.checked} checked)"
    assert check.failure is not None
    return f"FAILED  {check.name}: {check.failure.line()}"


def report_lines(report: AuditReport) -> Iterator[str]:
    variant = report.variant or "unknown variant"
    yield f"game {report.game_id} ({variant}), {report.chain.version} events"
    for check in report.checks:
        yield _check(check)
    for hand in report.hands:
        failed = [c.name for c in hand.checks if not c.ok]
        note = f": {', '.join(failed)} failed" if failed else ""
        yield f"        hand {hand.hand}: {hand.status}{note}"
    for receipt in report.receipts:
        mark = "ok     " if receipt.ok else "FAILED "
        yield f"{mark} receipt for version {receipt.version}: {receipt.detail}"
    if report.winners is not None:
        yield f"winners: {', '.join(f'seat {s}' for s in report.winners)}"
    if report.ok:
        yield "everything holds"
    else:
        first = report.failures[0]
        yield f"first failure ({first.check}): {first.line()}"
