"""Receipts: the service's signature over a game's chain hash at a version.

The hash chain catches an edited or reordered row, but not a deleted tail or a whole stream
rewritten with fresh hashes: only a witness outside the database can. Every answer to a
command carries a receipt (Ed25519 over game id, version and that version's chain hash); a
player who keeps receipts proves any later rewrite by showing one the stored history
contradicts. Ed25519 signatures are deterministic, so an idempotent retry gets the very
same receipt.

The signed bytes (docs/API.md, "Receipts") are unambiguous and domain-separated:

    b"fairway-receipt-v1\\x00" || uint32be(len(game_id)) || game_id (UTF-8)
                               || uint64be(version) || hash (32 bytes)
"""

from __future__ import annotations

import base64
import hashlib
import os
import secrets
import stat
from dataclasses import dataclass, field
from pathlib import Path
from typing import Annotated, Final, Literal

import msgspec
from cryptography.exceptions import InvalidSignature
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey, Ed25519PublicKey
from cryptography.hazmat.primitives.serialization import Encoding, PublicFormat

ALGORITHM: Final = "Ed25519"
DOMAIN = b"fairway-receipt-v1\x00"
KEY_FILE_NAME = "receipt-key"
"""The generated key's file in the data directory (base64 of the 32-byte seed)."""


class Receipt(msgspec.Struct, frozen=True, forbid_unknown_fields=True):
    """The service's signed word that game `game_id` stood at `version` with chain hash
    `hash`: keep it, and any later history that contradicts it is a proven rewrite
    (docs/API.md, "Receipts")."""

    game_id: Annotated[str, msgspec.Meta(min_length=1, max_length=200)]
    version: Annotated[int, msgspec.Meta(ge=1, description="The game's version it vouches for")]
    hash: Annotated[
        str,
        msgspec.Meta(
            pattern=r"^[0-9a-f]{64}(?![\s\S])",
            description="The hash-chain link of the event at `version`, lowercase hex",
        ),
    ]
    key_id: Annotated[
        str,
        msgspec.Meta(
            pattern=r"^[0-9a-f]{16}(?![\s\S])",
            description="The signing key (`GET /.well-known/fairway-receipt-key`)",
        ),
    ]
    signature: Annotated[
        str,
        msgspec.Meta(
            pattern=r"^[A-Za-z0-9_-]{86}(?![\s\S])",
            description="Ed25519 over the signed bytes (docs/API.md), base64url, no padding",
        ),
    ]


def signed_bytes(game_id: str, version: int, chain_hash: bytes) -> bytes:
    """What a receipt's signature covers; each part's length is fixed or prefixed."""
    name = game_id.encode()
    if len(chain_hash) != 32:
        raise ValueError("a chain hash is 32 bytes")
    if not 0 <= version < 1 << 64:
        raise ValueError("a version is an unsigned 64-bit number")
    return DOMAIN + len(name).to_bytes(4, "big") + name + version.to_bytes(8, "big") + chain_hash


def key_id(public_key: bytes) -> str:
    """A short, stable name for a public key: the first 16 hex digits of its SHA-256."""
    return hashlib.sha256(public_key).hexdigest()[:16]


def b64url(data: bytes) -> str:
    return base64.urlsafe_b64encode(data).rstrip(b"=").decode()


def from_b64url(text: str) -> bytes:
    return base64.urlsafe_b64decode(text + "=" * (-len(text) % 4))


@dataclass(frozen=True)
class ReceiptKey:
    """The service's signing key and the public facts about it. The public key and its id
    are derived once, when the key is made: every receipt names its key, and deriving the
    public key again for each one cost more than the signature (issue 19, lever 5)."""

    private: Ed25519PrivateKey
    public_key: bytes = field(init=False, repr=False, compare=False)
    """The 32-byte Ed25519 public key."""
    key_id: str = field(init=False, compare=False)
    """What receipts name this key: `key_id(public_key)`."""

    def __post_init__(self) -> None:
        public = self.private.public_key().public_bytes(Encoding.Raw, PublicFormat.Raw)
        object.__setattr__(self, "public_key", public)
        object.__setattr__(self, "key_id", key_id(public))

    @classmethod
    def from_seed(cls, seed: bytes) -> ReceiptKey:
        if len(seed) != 32:
            raise ValueError("an Ed25519 key is a 32-byte seed")
        return cls(Ed25519PrivateKey.from_private_bytes(seed))

    @classmethod
    def generate(cls) -> ReceiptKey:
        return cls(Ed25519PrivateKey.generate())


def sign(key: ReceiptKey, game_id: str, version: int, chain_hash: bytes) -> Receipt:
    signature = key.private.sign(signed_bytes(game_id, version, chain_hash))
    return Receipt(game_id, version, chain_hash.hex(), key.key_id, b64url(signature))


def verify_receipt(receipt: Receipt, public_key: bytes) -> bool:
    """Whether `public_key` signed exactly this receipt. Any field changed, a malformed
    field, or another key: False (never an exception)."""
    try:
        if receipt.key_id != key_id(public_key):
            return False
        chain_hash = bytes.fromhex(receipt.hash)
        if chain_hash.hex() != receipt.hash:
            return False
        signature = from_b64url(receipt.signature)
        if b64url(signature) != receipt.signature:
            return False
        message = signed_bytes(receipt.game_id, receipt.version, chain_hash)
        Ed25519PublicKey.from_public_bytes(public_key).verify(signature, message)
    except (InvalidSignature, ValueError, TypeError):
        return False
    return True


# ---- where the key comes from -------------------------------------------------------------


def parse_key_text(text: str) -> ReceiptKey:
    """Base64 (standard or url-safe, padding optional) of the 32-byte seed."""
    cleaned = text.strip()
    try:
        seed = base64.b64decode(
            cleaned.replace("-", "+").replace("_", "/") + "=" * (-len(cleaned) % 4),
            validate=True,
        )
    except ValueError:
        raise ValueError("must be base64 of a 32-byte Ed25519 seed") from None
    if len(seed) != 32:
        raise ValueError(f"must be base64 of a 32-byte Ed25519 seed, not of {len(seed)} bytes")
    return ReceiptKey.from_seed(seed)


def load_or_create(data_dir: Path) -> tuple[ReceiptKey, bool]:
    """The key kept in `data_dir` (created there once, mode 0600, if absent); True when it
    was created now. The file appears whole or not at all (written aside, then linked into
    place, which fails if it exists), so two processes starting at once share one key."""
    path = data_dir / KEY_FILE_NAME
    data_dir.mkdir(parents=True, exist_ok=True)
    if path.exists():
        return parse_key_text(path.read_text()), False
    key = ReceiptKey.generate()
    aside = data_dir / f".{KEY_FILE_NAME}.{os.getpid()}.{secrets.token_hex(4)}"
    descriptor = os.open(aside, os.O_WRONLY | os.O_CREAT | os.O_EXCL, stat.S_IRUSR | stat.S_IWUSR)
    try:
        with os.fdopen(descriptor, "w") as out:
            out.write(base64.b64encode(key.private.private_bytes_raw()).decode() + "\n")
        try:
            os.link(aside, path)
        except FileExistsError:
            return parse_key_text(path.read_text()), False
    finally:
        aside.unlink(missing_ok=True)
    return key, True


class RetiredReceiptKey(msgspec.Struct):
    """A key that signed receipts before the current one."""

    key_id: str
    public_key: str


class RegisteredReceiptKey(msgspec.Struct):
    """A key that signs receipts for this installation, as its database registered it."""

    key_id: str
    public_key: str
    first_seen: str
    """When it was first registered (ISO 8601)."""


class ReceiptKeyInfo(msgspec.Struct):
    """The public key that signs this instance's receipts, and every key that signs the
    installation's."""

    algorithm: Literal["Ed25519"]
    key_id: str
    """A receipt's `key_id`: the first 16 hex digits of SHA-256 of the public key."""
    public_key: str
    """The 32-byte public key, base64url without padding."""
    retired: list[RetiredReceiptKey] = msgspec.field(default_factory=list)
    """Keys of earlier receipts (after a rotation) configured on this instance."""
    keys: list[RegisteredReceiptKey] = msgspec.field(default_factory=list)
    """Every key that has signed receipts for this installation, first seen first: the
    current and retired keys of each instance on its database (each registers its own as it
    starts), this one's included. Verify a receipt with the key whose `key_id` it names."""


class ReceiptsToCheck(msgspec.Struct, forbid_unknown_fields=True):
    """Receipts to check against the game's stored history."""

    receipts: Annotated[list[Receipt], msgspec.Meta(max_length=100)]
