"""The audit of one game from its stored rows: one function behind three doors (the audit
endpoint, `fairway audit` from the database, `fairway verify` from an export).

Pure: it reads rows as stored (text, hashes), so a damaged history is reported, not raised.
The chain is checked over every row; the domain checks walk the finished hands only. A hand
in play is reported as pending and not examined: its checks would name hidden cards. In
public, hands whose events lie past a broken link are not examined either (`unverifiable`):
a forged `hand.ended` must not open a live hand to everyone.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

import msgspec

from domain.rules_versions import refusal
from events.codec import CodecError, default_codec
from events.schema.common import HandDealt, HandEnded
from events.schema.lobby import GameCreated
from events.stored import StoredRow
from service.audit.chain import check_chain
from service.audit.fairness import deal_failures
from service.audit.found import Item, Walk
from service.audit.report import (
    AuditReport,
    ChainReport,
    CheckName,
    CheckResult,
    Failure,
    HandAudit,
    HandStatus,
    ReceiptResult,
)
from service.audit.walk import walk


class RulesVersionRefused(ValueError):
    """The game names a rules version this code does not implement: it is not judged at
    all (`unknown_rules_version`), rather than judged by rules it was not played under."""

    code = "unknown_rules_version"

    def __init__(self, game_id: str, detail: str) -> None:
        super().__init__(f"game {game_id}: {detail}")
        self.detail = f"game {game_id}: {detail}"


def require_rules(game_id: str, variant: str, version: str) -> None:
    """`RulesVersionRefused` unless this code implements `version` of `variant`."""
    refused = refusal(variant, version)
    if refused is not None:
        raise RulesVersionRefused(game_id, refused)


HAND_CHECKS: tuple[CheckName, ...] = ("commitments", "deck", "legality", "scores")
GAME_CHECKS: tuple[CheckName, ...] = ("chain", *HAND_CHECKS, "winners")


def decode(rows: Sequence[StoredRow]) -> tuple[list[Item], Failure | None]:
    """The rows' events and metadata, up to the first row that does not decode."""
    codec = default_codec()
    try:  # one parse for the whole game when every row is sound
        events = codec.decode_many(
            [r.type for r in rows], [r.schema_version for r in rows], [r.data for r in rows]
        )
        metadatas = codec.decode_many_metadata([r.metadata for r in rows])
    except CodecError:
        pass  # find the first row that is not, and name it
    else:
        items = [Item(r.version, e, m) for r, e, m in zip(rows, events, metadatas, strict=True)]
        return items, None
    items = []
    for row in rows:
        try:
            event = codec.decode(row.type, row.schema_version, row.data)
        except CodecError as exc:
            text = str(exc)
            name = "type" if " holds a " in text else _path("data", text)
            name = "schema_version" if "newer than this code" in text else name
            return items, Failure("legality", row.version, name, f"does not decode: {text}")
        try:
            metadata = codec.decode_metadata(row.metadata)
        except CodecError as exc:
            text = str(exc)
            return items, Failure(
                "legality", row.version, _path("metadata", text), f"does not decode: {text}"
            )
        items.append(Item(row.version, event, metadata))
    return items, None


_AT = re.compile(r"at `\$((?:\.[A-Za-z_][A-Za-z0-9_]*|\[\d+\])+)`")


def _path(column: str, message: str) -> str:
    """`data.row` from msgspec's "... - at `$.row`" (the column alone when it names none)."""
    found = _AT.search(message)
    return column + found.group(1) if found else column


def audit_game(
    game_id: str,
    rows: Sequence[StoredRow],
    *,
    public: bool = False,
    extra: Sequence[CheckResult] = (),
    receipts: Sequence[ReceiptResult] = (),
) -> AuditReport:
    """Audit the game whose stream holds `rows` (in version order). `extra` adds checks made
    elsewhere (an export's header, receipts) to the report. `RulesVersionRefused` when
    `game.created` names a rules version this code does not implement."""
    chain = check_chain(game_id, rows)
    items, undecodable = decode(rows)
    created = items[0].event if items else None
    if isinstance(created, GameCreated):
        require_rules(game_id, created.variant, created.rules_version)
    deals = [(i.version, i.event.hand) for i in items if isinstance(i.event, HandDealt)]
    ends = [i.version for i in items if isinstance(i.event, HandEnded)]
    dealt = {hand: version for version, hand in deals}
    horizon = len(rows) + 1
    if undecodable is not None:
        horizon = undecodable.version or horizon
    if public and chain.failure is not None and chain.failure.version is not None:
        horizon = min(horizon, chain.failure.version)
    statuses: dict[int, HandStatus] = {}
    stop = horizon
    for index, (version, hand) in enumerate(deals):
        following = deals[index + 1][0] if index + 1 < len(deals) else len(rows) + 1
        end = next((v for v in ends if version < v < following), None)
        last = index + 1 == len(deals)
        if end is None and last and undecodable is None and version < horizon:
            statuses[hand] = "pending"  # the hand in play
        elif version >= horizon or (end is not None and end >= horizon) or (end is None and last):
            statuses[hand] = "unverifiable"
        if hand in statuses:
            stop = min(stop, version)
    found = walk(items, stop)
    examined = [(item.version, item.event) for item in items if item.version < stop]
    for failure in deal_failures(examined):
        found.fail(_hand_at(dealt, failure.version or 0), failure)
    if undecodable is not None:
        found.fail(_hand_at(dealt, undecodable.version or 0), undecodable)
    if found.stopped is not None:
        found.fail(_hand_at(dealt, found.stopped.version or 0), found.stopped)
    hands = [_hand(found, hand, statuses.get(hand)) for _, hand in deals]
    checks = [_game_check(name, found, chain, hands) for name in GAME_CHECKS]
    checks += list(extra)
    failures = sorted(
        (c.failure for c in checks if c.failure is not None),
        key=lambda f: (f.version is not None, f.version or 0),
    )
    winners = found.game_ended[1].winners if found.game_ended else None
    if public and winners is None:
        chain = msgspec.structs.replace(chain, head_hash=None)
    return AuditReport(
        game_id=game_id,
        variant=found.variant,
        ok=not failures,
        chain=chain,
        hands=hands,
        checks=checks,
        winners=winners,
        receipts=list(receipts),
        failures=failures,
    )


def _hand_at(dealt: dict[int, int], version: int) -> int:
    """The hand a version belongs to (0: before the first deal)."""
    return max((hand for hand, at in dealt.items() if at <= version), default=0)


def _hand(found: Walk, hand: int, status: HandStatus | None) -> HandAudit:
    if status is not None:
        return HandAudit(hand, status, [])
    checks = [
        CheckResult(
            name,
            (hand, name) not in found.failures,
            1 if name in ("commitments", "scores") else found.checked.get(hand, 0),
            found.failures.get((hand, name)),
        )
        for name in HAND_CHECKS
    ]
    failed = any(not check.ok for check in checks)
    return HandAudit(hand, "failed" if failed else "verified", checks)


def _game_check(
    name: CheckName, found: Walk, chain: ChainReport, hands: list[HandAudit]
) -> CheckResult:
    if name == "chain":
        return CheckResult("chain", chain.failure is None, chain.version, chain.failure)
    mine = [f for (_, check), f in found.failures.items() if check == name]
    first = min(mine, key=lambda f: f.version or 0) if mine else None
    examined = [h for h in hands if h.status in ("verified", "failed")]
    if name in ("commitments", "scores"):
        checked = len(examined)
    elif name == "winners":
        checked = int(found.game_ended is not None)
    else:
        checked = sum(found.checked.values())
    return CheckResult(name, first is None, checked, first)
