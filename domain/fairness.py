"""Whether a game's deals were fair, from its stored events alone (docs/SHUFFLE.md).

`check_deals` re-derives what each deal must have been and reports every place the events
say otherwise. For a `sha256-fisher-yates-v1` hand: the revealed seed matches the commitment
published at the deal. For a `hmac-seat-seeds-v2` hand: the server seed is the next link of
a seed chain committed before any seat existed (or before the hands it covers, for a chain
that extends an outlasted one); the seat seeds the deal used are exactly those the seats
set, each after that commitment and before the deal; the hand's seed is the HMAC of them.
When the game is over, each chain's secret must hash down to its anchor and to every server
seed revealed from it. An empty list means all of it holds.

A hand still in play is checked as far as its public facts go (its commitment and seat
seeds); its secrets are checked once revealed. The events may be the stored ones or a
viewer's copy: a secret blanked for the viewer is checked when it is no longer secret.
"""

from __future__ import annotations

import hashlib
from collections.abc import Sequence
from typing import Any

import msgspec

from domain.seed_chain import MAX_CHAIN_HANDS, SeedChain
from domain.shuffle import SHUFFLE_V1, SHUFFLE_V2, hand_seed, valid_seat_seed
from events.schema.common import GameEnded, GameStarted, HandDealt, HandEnded
from events.schema.lobby import (
    GameCreated,
    SeatClaimed,
    SeatReleased,
    SeatSeedSet,
    SeedChainExtended,
)


class DealFinding(msgspec.Struct, frozen=True):
    """The event at `version` contradicts a fair deal in its `field`."""

    version: int
    field: str
    message: str


def _hex32(text: str) -> bytes | None:
    try:
        value = bytes.fromhex(text)
    except ValueError:
        return None
    return value if len(value) == 32 and value.hex() == text else None


def _sha(text: str) -> str | None:
    value = _hex32(text)
    return None if value is None else hashlib.sha256(value).hexdigest()


class _Seats:
    """Who holds each seat, and the seeds each holder set, with their versions."""

    def __init__(self) -> None:
        self.names: dict[int, str] = {}
        self.seeds: dict[int, list[tuple[int, str]]] = {}
        """Per seat, the (version, seed) its current holder set: a claim starts afresh."""

    def claim(self, event: SeatClaimed) -> None:
        self.names[event.seat] = event.name
        self.seeds[event.seat] = []

    def release(self, event: SeatReleased) -> None:
        self.names.pop(event.seat, None)
        self.seeds.pop(event.seat, None)

    def expected(self, players: int, chain: SeedChain) -> tuple[str, ...] | None:
        """Each seat's seed for a deal now under `chain`: the last one its holder set after
        the chain was committed, else its name as claimed. None if a seat is unheld."""
        out = []
        for seat in range(players):
            if seat not in self.names:
                return None
            fresh = [seed for version, seed in self.seeds[seat] if version > chain.version]
            out.append(fresh[-1] if fresh else self.names[seat])
        return tuple(out)


class _Game:
    def __init__(self) -> None:
        self.findings: list[DealFinding] = []
        self.chains: list[SeedChain] = []
        self.seats = _Seats()
        self.players = 0
        self.dealt: dict[int, tuple[int, HandDealt]] = {}
        self.ended: dict[int, tuple[int, HandEnded]] = {}
        self.over: int | None = None

    def find(self, version: int, field: str, message: str) -> None:
        self.findings.append(DealFinding(version, field, message))

    def chain_for(self, hand: int) -> SeedChain | None:
        return next((chain for chain in self.chains if chain.covers(hand)), None)

    # ---- as the events come --------------------------------------------------------------

    def usable(self, version: int, field: str, hands: int) -> bool:
        """A chain longer than the service ever draws would make the check hash for ever."""
        if 1 <= hands <= MAX_CHAIN_HANDS:
            return True
        self.find(version, field, f"a seed chain covers 1..{MAX_CHAIN_HANDS} hands")
        return False

    def created(self, version: int, event: GameCreated) -> None:
        if event.seed_hands == 0:
            return  # a game from before seed chains: its hands are v1
        if not self.usable(version, "seed_hands", event.seed_hands):
            return
        if version != 1:
            self.find(version, "seed_anchor", "the seed chain is committed in the first event")
        if _hex32(event.seed_anchor) is None:
            self.find(version, "seed_anchor", "the anchor is not 32 bytes of lowercase hex")
        chain = SeedChain(1, event.seed_hands, event.seed_anchor, event.seed_secret, version)
        self.chains.append(chain)

    def extended(self, version: int, event: SeedChainExtended) -> None:
        last = self.chains[-1].last_hand if self.chains else 0
        if not self.usable(version, "hands", event.hands):
            return
        if event.first_hand != last + 1:
            self.find(version, "first_hand", f"a new chain must begin at hand {last + 1}")
        if max(self.dealt, default=0) != last:
            # Only the deal of a chain's last hand commits the next: one committed earlier
            # would let a history ask for endless hashing, and serves no hand.
            self.find(version, "first_hand", f"a new chain before hand {last} was dealt")
            return
        if self.dealt and max(self.dealt) >= event.first_hand:
            self.find(version, "first_hand", "a chain was committed after a hand it covers")
        if _hex32(event.anchor) is None:
            self.find(version, "anchor", "the anchor is not 32 bytes of lowercase hex")
        self.chains.append(
            SeedChain(event.first_hand, event.hands, event.anchor, event.secret, version)
        )

    def seed_set(self, version: int, event: SeatSeedSet) -> None:
        if event.seat not in self.seats.names:
            self.find(version, "seat", f"seat {event.seat} is not held: it cannot set a seed")
            return
        if not valid_seat_seed(event.seed):
            self.find(version, "seed", "a seat seed is 1..128 printable characters")
        self.seats.seeds[event.seat].append((version, event.seed))

    def hand_dealt(self, version: int, event: HandDealt) -> None:
        if event.hand != len(self.dealt) + 1 or event.hand in self.dealt:
            self.find(version, "hand", f"hand {len(self.dealt) + 1} was due, not {event.hand}")
            return
        self.dealt[event.hand] = (version, event)
        if event.shuffle == SHUFFLE_V1:
            return
        if event.shuffle != SHUFFLE_V2:
            self.find(version, "shuffle", f"unknown shuffle {event.shuffle!r}")
            return
        if event.nonce != event.hand:
            self.find(version, "nonce", f"the nonce of hand {event.hand} is its number")
        chain = self.chain_for(event.hand)
        if chain is None:
            self.find(version, "commitment", f"no seed chain covers hand {event.hand}")
            return
        if chain.link(event.hand) == 1:
            committed, where = chain.anchor, "the chain's anchor"
        else:
            before = self.ended.get(event.hand - 1)
            committed = "" if before is None else before[1].server_seed
            where = f"hand {event.hand - 1}'s revealed server seed"
        if event.commitment != committed:
            self.find(version, "commitment", f"the commitment is not {where}")
        expected = self.seats.expected(self.players, chain)
        if expected is None:
            self.find(version, "seat_seeds", "a seat was not held when the hand was dealt")
        elif event.seat_seeds != expected:
            self.find(
                version,
                "seat_seeds",
                f"the seats' seeds were {list(expected)} (the last each set after the chain "
                f"was committed, else its name), not {list(event.seat_seeds)}",
            )

    # ---- once all are read ---------------------------------------------------------------

    def check_revealed(self) -> None:
        for hand, (version, dealt) in sorted(self.dealt.items()):
            if hand not in self.ended:
                continue
            at, ended = self.ended[hand]
            if ended.seed and _sha(ended.seed) is None:
                self.find(at, "seed", "the revealed seed is not 32 bytes of lowercase hex")
                continue
            if dealt.seed and dealt.seed != ended.seed:
                self.find(version, "seed", f"hand {hand} was dealt from another seed")
            if dealt.shuffle == SHUFFLE_V1:
                if _sha(ended.seed) != dealt.commitment:
                    self.find(at, "seed", f"hand {hand}'s seed does not match its commitment")
            elif dealt.shuffle == SHUFFLE_V2:
                self.check_v2(hand, version, dealt, at, ended)

    def check_v2(
        self, hand: int, version: int, dealt: HandDealt, at: int, ended: HandEnded
    ) -> None:
        server = _hex32(ended.server_seed)
        if dealt.nonce != hand:
            return  # found at the deal; no seed derives from another nonce
        if server is None:
            self.find(at, "server_seed", f"hand {hand}'s server seed is not revealed")
            return
        if dealt.server_seed and dealt.server_seed != ended.server_seed:
            self.find(version, "server_seed", f"hand {hand} was dealt from another server seed")
        if hashlib.sha256(server).hexdigest() != dealt.commitment:
            self.find(at, "server_seed", f"hand {hand}'s server seed does not match its commitment")
        if hand_seed(server, dealt.nonce, dealt.seat_seeds).hex() != ended.seed:
            self.find(at, "seed", f"hand {hand}'s seed is not the HMAC of its seeds")

    def check_secrets(self) -> None:
        if self.over is None:
            return
        for chain in self.chains:
            secret = _hex32(chain.secret)
            if secret is None:
                self.find(chain.version, "secret", "the game is over: the chain's secret is due")
                continue
            links = [secret]
            for _ in range(chain.hands):
                links.append(hashlib.sha256(links[-1]).digest())
            links.reverse()  # links[k] is x_k
            if links[0].hex() != chain.anchor:
                self.find(chain.version, "secret", "the secret does not hash to the anchor")
            for hand in range(chain.first_hand, chain.last_hand + 1):
                if hand in self.ended and self.ended[hand][1].server_seed:
                    at, ended = self.ended[hand]
                    if links[chain.link(hand)].hex() != ended.server_seed:
                        self.find(
                            at,
                            "server_seed",
                            f"hand {hand}'s server seed is not link "
                            f"{chain.link(hand)} of the chain's secret",
                        )


def check_deals(events: Sequence[tuple[int, Any]]) -> list[DealFinding]:
    """Every finding against a fair deal in a game's (version, stored event) pairs, read
    from version 1 in order. Empty: every deal holds."""
    game = _Game()
    for version, event in events:
        match event:
            case GameCreated():
                game.created(version, event)
            case SeatClaimed():
                game.seats.claim(event)
            case SeatReleased():
                game.seats.release(event)
            case SeatSeedSet():
                game.seed_set(version, event)
            case SeedChainExtended():
                game.extended(version, event)
            case GameStarted():
                game.players = event.players
            case HandDealt():
                game.hand_dealt(version, event)
            case HandEnded():
                game.ended[event.hand] = (version, event)
            case GameEnded():
                game.over = version
    game.check_revealed()
    game.check_secrets()
    return sorted(game.findings, key=lambda f: (f.version, f.field))


__all__ = ["DealFinding", "check_deals"]
