"""What an audit finds, as typed values: the audit endpoint, `fairway audit` and `fairway
verify` all print one of these.

A check is named after the guarantee it stands for (the chain, the commitments, the deck,
the legality of every move, the scores, the winners) and reports its first failure only: the
version of the event and the field that does not hold, so an operator can go straight to it.
"""

from __future__ import annotations

from typing import Literal

import msgspec

CheckName = Literal[
    "chain", "export", "commitments", "deck", "legality", "scores", "winners", "receipts"
]
"""`chain`: every stored hash is the link of its event; `export`: the document's header
agrees with its events; `commitments`: each hand's commitment is SHA-256 of the seed it
reveals; `deck`: every dealt and drawn card is the one the seed's shuffle puts there;
`legality`: every move, decided again on the state before it, is allowed and gives the
stored events; `scores`: every hand's scores and totals recomputed; `winners`: the game's end
and winners recomputed; `receipts`: every signed receipt agrees with the history."""
HandStatus = Literal["verified", "failed", "pending", "unverifiable"]
"""`pending`: the hand is in play, so it is not examined (that would show hidden cards);
`unverifiable`: its events lie past a broken link, so they are not examined in public."""


class Failure(msgspec.Struct, frozen=True):
    check: CheckName
    version: int | None
    """The event's version in the game's stream (None: the document as a whole)."""
    field: str
    """What does not hold: `hash`, `data.card`, `metadata.action`, `seeds[2].seed`..."""
    detail: str

    def line(self) -> str:
        where = "document" if self.version is None else f"version {self.version}"
        return f"{where}: {self.field} {self.detail}"


class CheckResult(msgspec.Struct, frozen=True):
    name: CheckName
    ok: bool
    checked: int
    """How many items (links, hands, events, receipts) the check looked at."""
    failure: Failure | None = None


class ChainReport(msgspec.Struct, frozen=True):
    intact: bool
    version: int
    """How many events the chain covers (the stream's version)."""
    head_hash: str | None
    """Hex hash of the last event; keep it elsewhere to detect a rewritten or cut tail. In
    public, null until the game is over (the last event may hide a card, and its hash
    would help guess it: docs/API.md, "The hash chain in the feed")."""
    failure: Failure | None = None
    """The first broken link."""


class HandAudit(msgspec.Struct, frozen=True):
    hand: int
    status: HandStatus
    checks: list[CheckResult]
    """commitments, deck, legality, scores (empty unless examined)."""


class ReceiptResult(msgspec.Struct, frozen=True):
    version: int
    ok: bool
    detail: str


class AuditReport(msgspec.Struct, frozen=True):
    """The audit of one game: whether its stored history holds, check by check."""

    game_id: str
    variant: str | None
    ok: bool
    """True when every check examined holds (pending hands are not examined)."""
    chain: ChainReport
    hands: list[HandAudit]
    checks: list[CheckResult]
    """Each check over the whole game, with its first failure in version order."""
    winners: tuple[int, ...] | None
    """The winners the events record, once the game is over."""
    receipts: list[ReceiptResult] = []
    failures: list[Failure] = []
    """Every check's first failure, in version order."""
