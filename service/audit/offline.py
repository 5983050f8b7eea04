"""`fairway verify`: an export checked with no database and no server."""

from __future__ import annotations

from service.audit.audit import audit_game
from service.audit.export import check_export, parse, stored_rows
from service.audit.report import AuditReport, CheckResult


def verify_export(text: bytes, receipts: tuple[CheckResult, ...] = ()) -> AuditReport:
    """The audit of an export's events plus the check of its header; `ValueError` when the
    text is not an export at all."""
    export = parse(text)
    rows, unreadable = stored_rows(export)
    header = check_export(export, rows)
    if unreadable and header.ok:
        header = CheckResult("export", False, header.checked, unreadable[0])
    return audit_game(export.game_id, rows, extra=(header, *receipts))
