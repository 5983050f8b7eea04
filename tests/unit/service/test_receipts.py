"""Receipts: a signature over game, version and chain hash that verifies with the public key
and fails when anything in it changes; the key from configuration or the data directory."""

from __future__ import annotations

import base64
import hashlib
import stat
from pathlib import Path

import msgspec
import pytest
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey, Ed25519PublicKey

from service.contract.receipts import (
    KEY_FILE_NAME,
    Receipt,
    ReceiptKey,
    b64url,
    from_b64url,
    load_or_create,
    sign,
    signed_bytes,
    verify_receipt,
)
from service.ops.settings import Settings, SettingsError

pytestmark = pytest.mark.unit

SEED = bytes(range(32))
KEY = ReceiptKey.from_seed(SEED)
HASH = hashlib.sha256(b"an event").digest()


def test_the_signed_bytes_are_the_documented_encoding() -> None:
    assert signed_bytes("3f9c0a1b2c3d4e5f", 12, HASH) == (
        b"fairway-receipt-v1\x00"
        + (16).to_bytes(4, "big")
        + b"3f9c0a1b2c3d4e5f"
        + (12).to_bytes(8, "big")
        + HASH
    )


def test_a_receipt_verifies_with_the_public_key_by_any_ed25519_implementation() -> None:
    receipt = sign(KEY, "3f9c0a1b2c3d4e5f", 12, HASH)
    assert receipt.hash == HASH.hex()
    assert receipt.key_id == hashlib.sha256(KEY.public_key).hexdigest()[:16]
    assert verify_receipt(receipt, KEY.public_key)
    # The same check, by the library directly over the documented bytes.
    Ed25519PublicKey.from_public_bytes(KEY.public_key).verify(
        from_b64url(receipt.signature), signed_bytes(receipt.game_id, 12, HASH)
    )


def test_signing_is_deterministic_so_a_retry_gets_the_same_receipt() -> None:
    assert sign(KEY, "g", 3, HASH) == sign(ReceiptKey.from_seed(SEED), "g", 3, HASH)


@pytest.mark.parametrize(
    "change",
    [
        {"game_id": "3f9c0a1b2c3d4e5e"},
        {"version": 13},
        {"version": 11},
        {"hash": hashlib.sha256(b"another").hexdigest()},
        {"hash": HASH.hex().upper()},
        {"key_id": "0" * 16},
        {"signature": "A" * 86},
        {"signature": "!!"},
        {"hash": "not hex"},
        {"version": -1},
    ],
)
def test_a_receipt_with_any_field_changed_fails(change: dict[str, object]) -> None:
    receipt = sign(KEY, "3f9c0a1b2c3d4e5f", 12, HASH)
    assert not verify_receipt(msgspec.structs.replace(receipt, **change), KEY.public_key)


def test_a_receipt_fails_with_another_key_or_a_malformed_one() -> None:
    receipt = sign(KEY, "g", 1, HASH)
    other = ReceiptKey.from_seed(bytes(32)).public_key
    assert not verify_receipt(receipt, other)
    assert not verify_receipt(msgspec.structs.replace(receipt, key_id=other.hex()[:16]), b"x")


def test_a_receipt_round_trips_through_json() -> None:
    receipt = sign(KEY, "g", 1, HASH)
    decoded = msgspec.json.decode(msgspec.json.encode(receipt), type=Receipt)
    assert verify_receipt(decoded, KEY.public_key)


def test_the_data_directory_key_is_made_once_with_mode_0600_and_reused(tmp_path: Path) -> None:
    key, created = load_or_create(tmp_path / "var")
    again, created_again = load_or_create(tmp_path / "var")
    assert created
    assert not created_again
    assert again.public_key == key.public_key
    path = tmp_path / "var" / KEY_FILE_NAME
    assert stat.S_IMODE(path.stat().st_mode) == 0o600
    assert [p.name for p in (tmp_path / "var").iterdir()] == [KEY_FILE_NAME]


def test_the_key_comes_from_the_environment_or_a_file(tmp_path: Path) -> None:
    text = base64.b64encode(SEED).decode()
    assert Settings.from_env({"FAIRWAY_RECEIPT_KEY": text}).receipt_key == text
    urlsafe = base64.urlsafe_b64encode(SEED).decode().rstrip("=")
    assert Settings.from_env({"FAIRWAY_RECEIPT_KEY": urlsafe}).receipt_key == urlsafe
    keyfile = tmp_path / "key"
    keyfile.write_text(text + "\n")
    assert Settings.from_env({"FAIRWAY_RECEIPT_KEY_FILE": str(keyfile)}).receipt_key == text
    assert Settings.from_env({}).receipt_key is None


@pytest.mark.parametrize(
    ("env", "named", "says"),
    [
        ({"FAIRWAY_RECEIPT_KEY": "not base64!"}, "FAIRWAY_RECEIPT_KEY", "base64"),
        (
            {"FAIRWAY_RECEIPT_KEY": base64.b64encode(bytes(16)).decode()},
            "FAIRWAY_RECEIPT_KEY",
            "not of 16 bytes",
        ),
        ({"FAIRWAY_RECEIPT_KEY_FILE": "/nonexistent/key"}, "FAIRWAY_RECEIPT_KEY_FILE", "read"),
        (
            {
                "FAIRWAY_RECEIPT_KEY": base64.b64encode(SEED).decode(),
                "FAIRWAY_RECEIPT_KEY_FILE": "/etc/hostname",
            },
            "FAIRWAY_RECEIPT_KEY_FILE",
            "both set",
        ),
        ({"FAIRWAY_SEED_CHAIN_HANDS": "0"}, "FAIRWAY_SEED_CHAIN_HANDS", "between 1 and 100000"),
        ({"FAIRWAY_RECEIPT_RETIRED_KEYS": "abc"}, "FAIRWAY_RECEIPT_RETIRED_KEYS", "32 bytes"),
    ],
)
def test_an_unusable_key_setting_names_its_variable(
    env: dict[str, str], named: str, says: str
) -> None:
    with pytest.raises(SettingsError) as refused:
        Settings.from_env(env)
    assert refused.value.name == named
    assert says in refused.value.message


class Warnings:
    """Stands in for the app's logger: the process's logger may have been configured and
    cached by whatever ran before, writing wherever stderr was then."""

    def __init__(self) -> None:
        self.events: list[tuple[str, dict[str, object]]] = []

    def warning(self, event: str, **fields: object) -> None:
        self.events.append((event, fields))


def test_the_app_warns_when_several_instances_could_each_make_their_own_key(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import service.http.app

    warned = Warnings()
    monkeypatch.setattr(service.http.app, "log", warned)
    alone = service.http.app.receipt_key(Settings(data_dir=tmp_path))
    assert warned.events == []
    shared_db = service.http.app.receipt_key(
        Settings(data_dir=tmp_path, database_url="postgresql://db/x")
    )
    assert alone.public_key == shared_db.public_key
    assert [event for event, _ in warned.events] == ["receipt_key_from_data_dir"]
    fields = warned.events[0][1]
    assert fields["created"] is False
    assert fields["key_id"] == alone.key_id
    advice = str(fields["advice"])
    assert "instances sharing this database should share one receipt key" in advice
    assert "FAIRWAY_RECEIPT_KEY or FAIRWAY_RECEIPT_KEY_FILE" in advice

    configured = base64.b64encode(SEED).decode()
    key = service.http.app.receipt_key(
        Settings(data_dir=tmp_path, database_url="x", receipt_key=configured)
    )
    assert key.public_key == KEY.public_key
    assert len(warned.events) == 1


def test_retired_public_keys_are_read_as_base64url_or_base64() -> None:
    public = KEY.public_key
    text = f"{base64.b64encode(public).decode()}, {base64.urlsafe_b64encode(public).decode()}"
    settings = Settings.from_env({"FAIRWAY_RECEIPT_RETIRED_KEYS": text})
    assert settings.receipt_retired_keys == (b64url(public), b64url(public))


class CountedKey:
    """A private key that counts how often its public key is derived."""

    def __init__(self, seed: bytes) -> None:
        self.real = Ed25519PrivateKey.from_private_bytes(seed)
        self.derived = 0

    def public_key(self) -> Ed25519PublicKey:
        self.derived += 1
        return self.real.public_key()

    def sign(self, data: bytes) -> bytes:
        return self.real.sign(data)


def test_signing_receipts_derives_the_public_key_once_not_per_receipt() -> None:
    counted = CountedKey(SEED)
    key = ReceiptKey(counted)  # type: ignore[arg-type]
    receipts = [sign(key, "3f9c0a1b2c3d4e5f", version, HASH) for version in range(1, 6)]
    assert counted.derived == 1
    assert key == ReceiptKey(counted)  # type: ignore[arg-type]
    assert (key.key_id, key.public_key) == (KEY.key_id, KEY.public_key)
    assert all(verify_receipt(receipt, KEY.public_key) for receipt in receipts)
