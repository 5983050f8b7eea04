"""The domain checks: every move of a game decided again, by the decider that played it.

The walk folds the stored events in order. Before each action's events it decides the
recorded action (`metadata["action"]`, from `metadata["seat"]`) on the state before them and
compares what it gets with what is stored; before each deal it decides `DealHand` with the
stored seed. A turn the service played for a seat (`turn.played_for`, then the action's
events in the same append) is decided again like any other: the event must name the seat
the move is recorded for, and carry the move's metadata. One comparison covers the deck
(every card an event names comes from the seed's shuffle), the legality of the move, the
scores, the end of the hand and of the game, and the winners: a difference is filed under
the check its field belongs to. The walk always folds what is stored, so one bad event does
not hide the checks of those after it.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from domain.decider import Decider
from domain.errors import RuleViolation
from domain.variants import start
from events.schema import lobby
from events.schema.common import DealHand, GameEnded, GameStarted, HandDealt, HandEnded
from events.schema.lobby import GameCreated, TurnPlayedFor
from service.audit.found import Item, Walk
from service.audit.moves import compare, decide, move, tag
from service.audit.report import Failure
from service.play.record import PLAYED_FOR

MOVE_SPAN = 256
"""More events than one move or deal ever makes: the stored events a decision is held to."""
LOBBY = tuple(lobby.EVENTS)
"""Seats, seat seeds, seed chains: not the decider's; the commitment check reads them."""


def walk(items: Sequence[Item], stop: int) -> Walk:
    """Check `items` (a game's events in version order) up to, not including, version
    `stop`: the first event of a hand that is not to be examined."""
    found = Walk()
    decider: Decider | None = None
    state: Any = None
    created: GameCreated | None = None
    hand = 0
    i = 0
    while i < len(items) and items[i].version < stop:
        item = items[i]
        event = item.event
        if isinstance(event, LOBBY):
            if isinstance(event, TurnPlayedFor):
                _check_played_for(found, hand, item, items[i + 1] if i + 1 < len(items) else None)
            created = event if isinstance(event, GameCreated) else created
            found.variant = found.variant or getattr(event, "variant", None)
            i += 1
            continue
        if isinstance(event, GameStarted):
            if decider is not None:
                found.stopped = Failure(
                    "legality", item.version, "type", "a second game.started: a game starts once"
                )
                return found
            found.variant = event.variant
            _check_start(found, item, created)
            try:
                decider, state = start(event)
            except RuleViolation as refused:
                found.stopped = Failure(
                    "legality", item.version, "data", f"cannot start: {refused}"
                )
                return found
            i += 1
            continue
        if decider is None:
            found.stopped = Failure(
                "legality", item.version, "type", f"{tag(event)} before game.started"
            )
            return found
        if isinstance(event, HandDealt):
            hand = event.hand
            found.deals[hand] = (item.version, event)
            decided = decide(decider, state, _deal_command(event))
            batch = compare(found, hand, item, decided, items[i : i + MOVE_SPAN])
        else:
            batch = move(found, hand, decider, state, items[i : i + MOVE_SPAN])
        for stored in items[i : i + batch]:
            try:
                state = decider.evolve(state, stored.event)
            except Exception as exc:  # a stored event the rules cannot fold
                found.stopped = Failure(
                    "legality",
                    stored.version,
                    "data",
                    f"cannot be folded into the game: {exc}",
                )
                return found
            found.checked[hand] = found.checked.get(hand, 0) + 1
            if isinstance(stored.event, HandEnded):
                found.ended[stored.event.hand] = (stored.version, stored.event)
            elif isinstance(stored.event, GameEnded):
                found.game_ended = (stored.version, stored.event)
        i += batch
    return found


def _check_played_for(found: Walk, hand: int, item: Item, following: Item | None) -> None:
    """A `turn.played_for` opens the append of the move it played: it names the seat the
    move's metadata names, for the reason the metadata gives, and the move follows."""
    event, metadata = item.event, item.metadata
    if metadata.get("seat") != event.seat:
        detail = f"differs from the seat of the move (metadata.seat {metadata.get('seat')!r})"
        found.fail(hand, Failure("legality", item.version, "data.seat", detail))
    elif metadata.get(PLAYED_FOR) != event.reason:
        detail = f"differs from metadata.played_for ({metadata.get(PLAYED_FOR)!r})"
        found.fail(hand, Failure("legality", item.version, "data.reason", detail))
    elif following is None or following.metadata != metadata or isinstance(following.event, LOBBY):
        detail = "is not followed by the move it played (the same append's events)"
        found.fail(hand, Failure("legality", item.version, "type", detail))


def _deal_command(dealt: HandDealt) -> DealHand:
    """The deal command that gives `dealt` when the deal is fair: from the server seed and
    the seats' seeds (v2), or from the seed itself (v1)."""
    if dealt.server_seed:
        return DealHand(server_seed=dealt.server_seed, seat_seeds=dealt.seat_seeds)
    return DealHand(seed=dealt.seed)


def _check_start(found: Walk, item: Item, created: GameCreated | None) -> None:
    started = item.event
    if created is None:
        found.fail(0, Failure("legality", item.version, "type", "game.started before game.created"))
    elif started.variant != created.variant:
        detail = f"differs from game.created (expected {created.variant}, found {started.variant})"
        found.fail(0, Failure("legality", item.version, "data.variant", detail))
    elif started.players != created.seats:
        detail = (
            f"differs from game.created's seats (expected {created.seats}, found {started.players})"
        )
        found.fail(0, Failure("legality", item.version, "data.players", detail))
    elif started.options != created.options:
        found.fail(0, Failure("legality", item.version, "data.options", "differ from game.created"))
