"""Receipts held by players, checked against the stored history.

A receipt is the service's signature over (game, version, chain hash at that version)
(service/contract/receipts.py). Kept outside the database, it catches what the chain alone cannot:
a stored history that no longer holds the signed version (a deleted tail) or holds another
hash there (a rewritten stream, hashes recomputed). A receipt whose signature does not hold
proves nothing and is reported as such.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import msgspec

from events.stored import StoredRow
from service.audit.report import CheckResult, Failure, ReceiptResult
from service.contract.receipts import Receipt, from_b64url, key_id, verify_receipt

_RECEIPTS = msgspec.json.Decoder(list[Receipt])


def parse_receipts(text: bytes) -> list[Receipt]:
    """A JSON list of receipts; `ValueError` naming what does not fit."""
    try:
        return _RECEIPTS.decode(text)
    except (msgspec.ValidationError, msgspec.DecodeError) as exc:
        raise ValueError(f"not a JSON list of receipts: {exc}") from None


def parse_key(text: str) -> bytes:
    """A public key as `GET /.well-known/fairway-receipt-key` gives it (base64url) or hex."""
    text = text.strip()
    try:
        key = bytes.fromhex(text) if len(text) == 64 else from_b64url(text)
    except ValueError:
        key = b""
    if len(key) != 32:
        raise ValueError(f"{text!r} is not a 32-byte Ed25519 public key (base64url or hex)")
    return key


def check_receipts(
    game_id: str,
    rows: Sequence[StoredRow],
    receipts: Sequence[Receipt],
    public_keys: Sequence[bytes],
) -> tuple[CheckResult, list[ReceiptResult]]:
    """Each receipt against the rows: signed by one of `public_keys`, for this game, and
    the stored hash at its version is the one signed."""
    keys: Mapping[str, bytes] = {key_id(key): key for key in public_keys}
    results = [_check(game_id, rows, receipt, keys) for receipt in receipts]
    bad = [(r, result) for r, result in zip(receipts, results, strict=True) if not result.ok]
    failure = None
    if bad:
        receipt, result = min(bad, key=lambda pair: pair[0].version)
        failure = Failure("receipts", receipt.version, "receipt", result.detail)
    return CheckResult("receipts", failure is None, len(receipts), failure), results


def _check(
    game_id: str, rows: Sequence[StoredRow], receipt: Receipt, keys: Mapping[str, bytes]
) -> ReceiptResult:
    version = receipt.version

    def result(ok: bool, detail: str) -> ReceiptResult:
        return ReceiptResult(version, ok, detail)

    key = keys.get(receipt.key_id)
    if key is None:
        return result(False, f"signed by key {receipt.key_id}, which is not a known key")
    if not verify_receipt(receipt, key):
        return result(False, "bad signature: the receipt was not signed as it stands")
    if receipt.game_id != game_id:
        return result(False, f"is for game {receipt.game_id}, not {game_id}")
    if not 1 <= version <= len(rows) or rows[version - 1].version != version:
        stored = len(rows)
        return result(
            False,
            f"version missing: the history ends at version {stored}; the signed version "
            f"{version} was deleted (a cut tail)",
        )
    stored_hash = rows[version - 1].hash.hex()
    if stored_hash != receipt.hash:
        return result(
            False, "hash differs: the stored hash at this version is not the one signed (rewritten)"
        )
    return result(True, "the stored history holds the signed hash")
