"""A game's lobby, folded from its lobby events: the variant, the seats, who holds them, and
the seed each holder set for the coming hands."""

from __future__ import annotations

import hashlib
import secrets

import msgspec

from events.schema.common import GameOptions
from events.schema.lobby import GameCreated, SeatClaimed, SeatReleased, SeatResigned, SeatSeedSet


class Lobby(msgspec.Struct, frozen=True):
    variant: str
    seats: int
    options: GameOptions
    creator_hash: str
    title: str = ""
    names: tuple[str | None, ...] = ()
    token_hashes: tuple[str | None, ...] = ()
    seat_seeds: tuple[str | None, ...] = ()
    """The seed each seat's holder set since it claimed the seat and since the seed chain
    of the coming hands was committed; None: it set none (its name stands in)."""
    resigned: tuple[str | None, ...] = ()
    """Per seat, why the bot now plays it (`resigned`, `withdrawn`), None while its holder
    does; empty until a seat resigns."""
    tournament: str = ""
    """The tournament the game is a table of (empty for a casual game)."""
    peers: tuple[str, ...] = ()
    """Duplicate deals: every game of the round dealt the same cards (GameCreated.peers)."""
    bots: tuple[str, ...] = ()
    """Per seat, the level of the bot that holds it ("" for a person's seat or a free one);
    empty until a bot takes a seat."""
    rematch_of: str = ""
    """The finished game this one is the rematch of (GameCreated.rematch_of)."""

    @classmethod
    def created(cls, event: GameCreated) -> Lobby:
        return cls(
            variant=event.variant,
            seats=event.seats,
            options=event.options,
            creator_hash=event.creator_hash,
            title=event.title,
            names=(None,) * event.seats,
            token_hashes=(None,) * event.seats,
            seat_seeds=(None,) * event.seats,
            tournament=event.tournament,
            peers=event.peers,
            rematch_of=event.rematch_of,
        )

    def claimed(self, event: SeatClaimed) -> Lobby:
        names = list(self.names)
        hashes = list(self.token_hashes)
        names[event.seat] = event.name
        hashes[event.seat] = event.token_hash
        return msgspec.structs.replace(
            self,
            names=tuple(names),
            token_hashes=tuple(hashes),
            seat_seeds=self._seed(event.seat, None),
            bots=self._bot(event.seat, event.bot),
        )

    def released(self, event: SeatReleased) -> Lobby:
        names = list(self.names)
        hashes = list(self.token_hashes)
        names[event.seat] = None
        hashes[event.seat] = None
        return msgspec.structs.replace(
            self,
            names=tuple(names),
            token_hashes=tuple(hashes),
            seat_seeds=self._seed(event.seat, None),
            bots=self._bot(event.seat, ""),
        )

    def seed_set(self, event: SeatSeedSet) -> Lobby:
        return msgspec.structs.replace(self, seat_seeds=self._seed(event.seat, event.seed))

    def seat_resigned(self, event: SeatResigned) -> Lobby:
        resigned = list(self.resigned or (None,) * self.seats)
        resigned[event.seat] = event.reason
        return msgspec.structs.replace(self, resigned=tuple(resigned))

    def resigned_reason(self, seat: int) -> str | None:
        """Why the bot plays `seat` (None: its holder does)."""
        return self.resigned[seat] if self.resigned else None

    def chain_extended(self) -> Lobby:
        """A new seed chain: seeds set before it was committed count for none of its hands."""
        return msgspec.structs.replace(self, seat_seeds=(None,) * self.seats)

    def deal_seeds(self) -> tuple[str, ...]:
        """Each seat's seed for the next deal: the one its holder set, else its name (a
        choice of the player's that the service cannot make; docs/SHUFFLE.md)."""
        seeds = self.seat_seeds or (None,) * self.seats
        return tuple(
            seed if seed is not None else (name or "")
            for seed, name in zip(seeds, self.names, strict=True)
        )

    def bot_at(self, seat: int) -> str | None:
        """The level of the bot holding `seat`; None for a person's seat or a free one."""
        return (self.bots[seat] or None) if self.bots else None

    def bot_seats(self) -> dict[int, str]:
        """Every seat a bot holds, with its level."""
        return {seat: level for seat, level in enumerate(self.bots) if level}

    def _bot(self, seat: int, level: str) -> tuple[str, ...]:
        if not level and not self.bots:
            return ()
        bots = list(self.bots or ("",) * self.seats)
        bots[seat] = level
        return tuple(bots)

    def _seed(self, seat: int, seed: str | None) -> tuple[str | None, ...]:
        seeds = list(self.seat_seeds or (None,) * self.seats)
        seeds[seat] = seed
        return tuple(seeds)

    def seat_of(self, token: str) -> int | None:
        digest = token_hash(token)
        for seat, stored in enumerate(self.token_hashes):
            if stored is not None and secrets.compare_digest(stored, digest):
                return seat
        return None

    def is_creator(self, token: str) -> bool:
        return secrets.compare_digest(self.creator_hash, token_hash(token))

    def free_seats(self) -> list[int]:
        return [seat for seat, name in enumerate(self.names) if name is None]


def new_token() -> str:
    return secrets.token_urlsafe(24)


def token_hash(token: str) -> str:
    return hashlib.sha256(token.encode()).hexdigest()
