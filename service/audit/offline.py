"""`fairway verify`: an export checked with no database and no server."""

from __future__ import annotations

from collections.abc import Sequence

from service.audit.audit import audit_game, require_rules
from service.audit.export import check_export, parse, stored_rows
from service.audit.receipts import check_receipts
from service.audit.report import AuditReport, CheckResult, ReceiptResult
from service.contract.receipts import Receipt


def verify_export(
    text: bytes, receipts: Sequence[Receipt] = (), public_keys: Sequence[bytes] = ()
) -> AuditReport:
    """The audit of an export's events, the check of its header, and of any receipts
    (against `public_keys`); `ValueError` when the text is not an export at all, and
    `RulesVersionRefused` (a ValueError) when its header or its `game.created` names a rules
    version this verifier does not implement."""
    export = parse(text)
    require_rules(export.game_id, export.variant, export.rules_version)
    rows, unreadable = stored_rows(export)
    header = check_export(export, rows)
    if unreadable and header.ok:
        header = CheckResult("export", False, header.checked, unreadable[0])
    extra = [header]
    results: list[ReceiptResult] = []
    if receipts:
        check, results = check_receipts(export.game_id, rows, receipts, public_keys)
        extra.append(check)
    return audit_game(export.game_id, rows, extra=extra, receipts=results)
