"""The installation's receipt keys: every public key that signs receipts for the games of one
store.

Instances that share a database may each sign with a key of their own: one made in its data
directory when no FAIRWAY_RECEIPT_KEY is configured, or the old one and the new one during a
rotation. Each registers its key in the store as it starts, with the retired keys it is
configured with (FAIRWAY_RECEIPT_RETIRED_KEYS), so a receipt signed by any of them checks
through any instance's audit and through `fairway audit`, and `GET
/.well-known/fairway-receipt-key` lists them all. The store keeps a key for good: a key that
signs no more still checks the receipts it signed.
"""

from __future__ import annotations

from collections.abc import Sequence

from events.store import EventStore, RegisteredKey
from service.contract.receipts import ReceiptKey, from_b64url, key_id


async def accepted_keys(store: EventStore, given: Sequence[bytes] = ()) -> list[bytes]:
    """The keys a receipt may be signed with: `given`, and every one registered in `store`."""
    return [*given, *(key.public_key for key in await store.receipt_keys())]


class ReceiptKeys:
    """This instance's signing key and retired keys, and the store that holds the
    installation's registered keys."""

    def __init__(self, store: EventStore, signing: ReceiptKey, retired: Sequence[str] = ()) -> None:
        self.store = store
        self.signing = signing
        self.retired = tuple(retired)
        """Public keys, base64url, as FAIRWAY_RECEIPT_RETIRED_KEYS gives them."""

    @property
    def configured(self) -> list[bytes]:
        return [self.signing.public_key, *map(from_b64url, self.retired)]

    async def register(self) -> None:
        """At start: this instance's keys join the installation's (idempotent)."""
        for public_key in self.configured:
            await self.store.register_receipt_key(key_id(public_key), public_key)

    async def registered(self) -> list[RegisteredKey]:
        return await self.store.receipt_keys()

    async def accepted(self) -> list[bytes]:
        """What an audit accepts: this instance's keys, and every registered one (another
        instance's may have joined since this one started)."""
        return await accepted_keys(self.store, self.configured)
