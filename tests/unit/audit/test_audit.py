"""The audit of stored rows: a hand in play is pending and not examined; in public, hands
past a broken link are not examined; receipts the history contradicts are reported."""

from __future__ import annotations

import msgspec
import pytest

from events.schema.common import HandEnded
from events.stored import StoredRow
from service.audit import audit_game
from service.audit.receipts import check_receipts
from service.contract.receipts import ReceiptKey, sign
from tests.support.histories import played, rows

pytestmark = pytest.mark.unit

GAME = "0123456789abcdef"


def golf_rows() -> tuple[list[StoredRow], list[int]]:
    stored, _ = played("golf", 2, seed=11)
    ended = [v for v, (e, _) in enumerate(stored, start=1) if isinstance(e, HandEnded)]
    return rows(GAME, stored), ended


def test_a_hand_in_play_is_pending_and_the_finished_ones_are_verified() -> None:
    history, ended = golf_rows()
    live = history[: ended[2] - 3]  # hand 3 is in play
    report = audit_game(GAME, live, public=True)
    assert report.ok
    assert [h.status for h in report.hands] == ["verified", "verified", "pending"]
    assert report.hands[2].checks == []
    assert report.winners is None


def test_in_public_the_hands_past_a_broken_link_are_not_examined() -> None:
    history, ended = golf_rows()
    broken = next(r.version for r in history if r.version > ended[0] and r.type == "card.replaced")
    row = history[broken - 1]
    data = msgspec.json.decode(row.data)
    data["card"] = "2C" if data["card"] != "2C" else "3C"
    history[broken - 1] = msgspec.structs.replace(row, data=msgspec.json.encode(data).decode())
    public = audit_game(GAME, history, public=True)
    assert not public.ok
    assert public.chain.failure is not None
    assert public.chain.failure.version == broken
    assert [h.status for h in public.hands[:3]] == ["verified", "unverifiable", "unverifiable"]
    operator = audit_game(GAME, history)
    assert operator.hands[1].status == "failed"
    assert operator.failures[0].version == broken


def test_a_missing_action_in_metadata_is_a_legality_failure() -> None:
    history, _ = golf_rows()
    at = next(r.version for r in history if r.type == "card.drawn")
    history[at - 1] = msgspec.structs.replace(history[at - 1], metadata="{}")
    report = audit_game(GAME, history)
    assert any(
        f.check == "legality" and f.version == at and f.field == "metadata.action"
        for f in report.failures
    ), [f.line() for f in report.failures]


def test_receipts_the_history_contradicts_are_reported() -> None:
    history, _ = golf_rows()
    key, other = ReceiptKey.generate(), ReceiptKey.generate()
    held = [sign(key, GAME, v, history[v - 1].hash) for v in (5, 40, len(history))]
    check, results = check_receipts(GAME, history, held, [key.public_key])
    assert check.ok
    assert all(r.ok for r in results)

    forged = msgspec.structs.replace(held[0], signature=held[1].signature)
    foreign = sign(other, GAME, 40, history[39].hash)
    elsewhere = sign(key, "fedcba9876543210", 40, history[39].hash)
    rewritten = [*history[:39], msgspec.structs.replace(history[39], hash=bytes(32))]
    check, results = check_receipts(
        GAME, rewritten[:100], [forged, foreign, elsewhere, *held], [key.public_key]
    )
    assert not check.ok
    details = [(r.version, r.ok, r.detail.split(":")[0]) for r in results]
    assert details == [
        (5, False, "bad signature"),
        (40, False, f"signed by key {other.key_id}, which is not a known key"),
        (40, False, "is for game fedcba9876543210, not 0123456789abcdef"),
        (5, True, "the stored history holds the signed hash"),
        (40, False, "hash differs"),
        (len(history), False, "version missing"),
    ]
    assert check.failure is not None
    assert check.failure.version == 5


def test_the_report_for_receipts_is_carried_by_the_audit() -> None:
    history, _ = golf_rows()
    key = ReceiptKey.generate()
    check, results = check_receipts(
        GAME, history[:-2], [sign(key, GAME, len(history), history[-1].hash)], [key.public_key]
    )
    report = audit_game(GAME, history[:-2], extra=[check], receipts=results)
    assert not report.ok
    assert report.receipts[0].detail.startswith("version missing")
