"""A rematch (boardgame.io's `playAgain`): a finished game opens the same game again, the
same variant, options and title, each seat held by the same holder with the same token (the
same token hash), each bot seat by a bot of the same level, started at once.

One rematch per game: the new game's id derives from the old one's, its events' ids from
the new id, so a rematch asked twice, or by two seats at once, or on two instances, finds
the game made first. The two games link to each other: the new game's `game.created` names
the old in `rematch_of`, and `game.rematched` appended to the old names the new.
"""

from __future__ import annotations

import hashlib

from domain.rules_versions import current
from events.schema.lobby import GameCreated, GameRematched, SeatClaimed
from service.commands.command import Actor, Command, Decision, NothingToDo
from service.contract.problems import ApiError
from service.play.deals import first_chain
from service.play.moves import seat_for
from service.play.record import GameRecord
from service.play.seating import seated


def rematch_id(game_id: str) -> str:
    """The id of `game_id`'s rematch: one per game, whoever asks and wherever."""
    return hashlib.sha256(f"fairway rematch\x00{game_id}".encode()).hexdigest()[:16]


def check_may_rematch(record: GameRecord, token: str) -> None:
    """A seat's holder (401 `invalid_token` for a token that holds none) of a finished game
    (409 `game_in_play` before its end)."""
    seat_for(record, token)
    if not record.finished:
        raise ApiError(409, "game_in_play", "the game is not over: a rematch follows its end")


def opening(record: GameRecord, chain_hands: int) -> list[object]:
    """The rematch's events: created, seated as the finished game was, started, dealt."""
    lobby, decider = record.lobby, record.decider
    assert decider is not None
    chain = first_chain(decider.initial_state(lobby.seats, lobby.options), chain_hands)
    created = GameCreated(
        lobby.variant,
        lobby.seats,
        lobby.options,
        lobby.creator_hash,
        lobby.title,
        seed_anchor=chain.anchor,
        seed_hands=chain.hands,
        seed_secret=chain.secret,
        rematch_of=record.game_id,
        rules_version=current(lobby.variant),
    )
    claims = [
        SeatClaimed(seat, name or "", digest or "", bot=lobby.bot_at(seat) or "")
        for seat, (name, digest) in enumerate(zip(lobby.names, lobby.token_hashes, strict=True))
    ]
    return seated(rematch_id(record.game_id), created, claims, chain_hands)


def link(token: str, new_id: str) -> Command[GameRecord]:
    """`game.rematched` on the finished game, naming its rematch; nothing once linked."""

    def authorize(record: GameRecord) -> Actor:
        seat = seat_for(record, token)
        return Actor(f"seat:{seat}", seat)

    def decide(record: GameRecord, actor: Actor) -> Decision:
        if record.rematch:
            raise NothingToDo
        return Decision([GameRematched(new_id)], {"rematched_by": actor.seat})

    return Command(authorize, decide)
