"""The domain checks: every move of a game decided again, by the decider that played it.

The walk folds the stored events in order. Before each action's events it decides the
recorded action (`metadata["action"]`, from `metadata["seat"]`) on the state before them and
compares what it gets with what is stored; before each deal it decides `DealHand` with the
stored seed. One comparison covers the deck (every card an event names comes from the
seed's shuffle), the legality of the move, the scores, the end of the hand and of the game,
and the winners: a difference is filed under the check its field belongs to. The walk
always folds what is stored, so one bad event does not hide the checks of those after it.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

import msgspec

from domain.decider import Decider
from domain.errors import RuleViolation
from domain.variants import start
from events.schema import lobby
from events.schema.common import Act, DealHand, GameEnded, GameStarted, HandDealt, HandEnded
from events.schema.lobby import GameCreated
from events.schema.shedding import (
    BlindCardTurned,
    CardsPlayed,
    ChooseStacks,
    EndPlay,
    PlayBlind,
    PlayCards,
    StacksChosen,
)
from service.audit.report import CheckName, Failure
from service.record import ACTION

DECK_FIELDS: dict[str, frozenset[str]] = {
    "setup.card.turned": frozenset({"card"}),
    "cards.peeked": frozenset({"cards"}),
    "card.drawn": frozenset({"card"}),
    "card.replaced": frozenset({"card", "replaced"}),
    "card.discarded": frozenset({"card"}),
    "card.turned": frozenset({"card"}),
    "stock.reshuffled": frozenset({"cards"}),
    "layouts.revealed": frozenset({"layouts"}),
    "blind.card.turned": frozenset({"card"}),
    "cards.played": frozenset({"stack_cards"}),
    "pile.burned": frozenset({"cards"}),
    "pile.picked.up": frozenset({"cards"}),
}
"""The fields whose cards come from the seed's shuffle (not from what the seat chose)."""
LOBBY = tuple(lobby.EVENTS)
"""Seats, seat seeds, seed chains: not the decider's; the commitment check reads them."""
SEED_FIELDS = frozenset({"seed", "commitment", "server_seed", "seat_seeds", "nonce"})
"""Of a deal, left to the commitment check (domain/fairness.py), which knows which of them
the seats and the seed chain fix."""


@dataclass(frozen=True, slots=True)
class Item:
    """A stored event, decoded, with its metadata."""

    version: int
    event: Any
    metadata: dict[str, Any]


@dataclass(slots=True)
class Walk:
    """What the walk found: first failures by (hand, check), events checked by hand."""

    failures: dict[tuple[int, CheckName], Failure] = field(default_factory=dict)
    checked: dict[int, int] = field(default_factory=dict)
    deals: dict[int, tuple[int, HandDealt]] = field(default_factory=dict)
    ended: dict[int, tuple[int, HandEnded]] = field(default_factory=dict)
    game_ended: tuple[int, GameEnded] | None = None
    variant: str | None = None
    stopped: Failure | None = None
    """The walk could not go on (a stored event that cannot be folded)."""

    def fail(self, hand: int, failure: Failure) -> None:
        self.failures.setdefault((hand, failure.check), failure)


def _tag(event: Any) -> str:
    return str(event.__struct_config__.tag)


def _builtins(value: Any) -> Any:
    return msgspec.to_builtins(value)


def _check_for(event: Any, name: str) -> CheckName:
    if isinstance(event, GameEnded):
        return "winners"
    if isinstance(event, HandEnded):
        return "scores"
    if name in DECK_FIELDS.get(_tag(event), ()):
        return "deck"
    return "legality"


def _difference(version: int, expected: Any, found: Any) -> Failure | None:
    """The first field in which the stored event differs from the re-decided one."""
    if type(expected) is not type(found):
        return Failure(
            "legality",
            version,
            "type",
            f"differs from the re-decided event (expected {_tag(expected)}, found {_tag(found)})",
        )
    want, have = _builtins(expected), _builtins(found)
    for name in want.keys() | have.keys():
        if isinstance(found, HandDealt) and name in SEED_FIELDS:
            continue
        if want.get(name) != have.get(name):
            return Failure(
                _check_for(found, name),
                version,
                f"data.{name}",
                f"differs from the re-decided event (expected {_show(want.get(name))}, "
                f"found {_show(have.get(name))})",
            )
    return None


def _show(value: Any) -> str:
    return msgspec.json.encode(value).decode() if not isinstance(value, str) else value


def _decide(decider: Decider, state: Any, command: Any) -> tuple[Any, ...] | RuleViolation:
    try:
        return decider.decide(state, command)
    except RuleViolation as refused:
        return refused
    except Exception as exc:  # a forged history can put the decider where play never could
        return RuleViolation("illegal_position", f"the decider failed: {exc!r}")


def _matches(decided: tuple[Any, ...], stored: Sequence[Item]) -> bool:
    return len(stored) >= len(decided) > 0 and all(
        d == s.event for d, s in zip(decided, stored, strict=False)
    )


def _inferred(stored: Sequence[Item]) -> list[Any]:
    """Tens-shedding actions that the first stored event of a move names (its legal
    actions are options, not a list of moves to try)."""
    match stored[0].event if stored else None:
        case StacksChosen(cards=cards):
            return [ChooseStacks(cards)]
        case CardsPlayed(hand=hand, stacks=stacks):
            return [PlayCards(hand, stacks)]
        case BlindCardTurned(stack=stack):
            return [PlayBlind(stack)]
    return [EndPlay()]


def _explain(
    decider: Decider, state: Any, seat: int, action: Any, players: int, stored: Sequence[Item]
) -> tuple[str, Any, int] | None:
    """When the recorded move does not give the stored events but another does, the
    metadata is what was altered: (`metadata.seat` or `metadata.action`, the move the
    events record, how many events it makes)."""
    for other in range(players):
        if other != seat:
            decided = _decide(decider, state, Act(other, action))
            if not isinstance(decided, RuleViolation) and _matches(decided, stored):
                return "metadata.seat", other, len(decided)
    candidates = [
        a for a in decider.legal_actions(state, seat) if isinstance(a, _concrete(decider))
    ] + _inferred(stored)
    for candidate in candidates:
        if candidate == action:
            continue
        decided = _decide(decider, state, Act(seat, candidate))
        if not isinstance(decided, RuleViolation) and _matches(decided, stored):
            return "metadata.action", _builtins(candidate), len(decided)
    return None


def _concrete(decider: Decider) -> tuple[type, ...]:
    return tuple(getattr(decider.action_type, "__args__", (decider.action_type,)))


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
            created = event if isinstance(event, GameCreated) else created
            found.variant = found.variant or getattr(event, "variant", None)
            i += 1
            continue
        if isinstance(event, GameStarted):
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
                "legality", item.version, "type", f"{_tag(event)} before game.started"
            )
            return found
        if isinstance(event, HandDealt):
            hand = event.hand
            found.deals[hand] = (item.version, event)
            decided = _decide(decider, state, _deal_command(event))
            batch = _compare(found, hand, item, decided, items[i:])
        else:
            batch = _move(found, hand, decider, state, items[i:])
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


def _move(found: Walk, hand: int, decider: Decider, state: Any, rest: Sequence[Item]) -> int:
    """Decide the move recorded on `rest[0]` again; returns how many stored events it
    accounts for."""
    item = rest[0]
    seat, raw = item.metadata.get("seat"), item.metadata.get(ACTION)
    if not isinstance(seat, int) or isinstance(seat, bool) or raw is None:
        found.fail(
            hand,
            Failure(
                "legality",
                item.version,
                "metadata.action",
                "is missing: the move cannot be decided again",
            ),
        )
        return 1
    try:
        action = msgspec.convert(raw, decider.action_type)
    except msgspec.ValidationError as exc:
        found.fail(
            hand,
            Failure(
                "legality",
                item.version,
                "metadata.action",
                f"is not a {decider.name} action: {exc}",
            ),
        )
        return _same_append(rest)
    decided = _decide(decider, state, Act(seat, action))
    if isinstance(decided, RuleViolation) or not _matches(decided, rest):
        players = int(state.players)
        explained = _explain(decider, state, seat, action, players, rest)
        if explained is not None:
            name, expected, count = explained
            found.fail(
                hand,
                Failure(
                    "legality",
                    item.version,
                    name,
                    f"differs from the move the stored events record (expected "
                    f"{_show(expected)}, found {_show(seat if name == 'metadata.seat' else raw)})",
                ),
            )
            return count
    return _compare(found, hand, item, decided, rest)


def _compare(
    found: Walk,
    hand: int,
    item: Item,
    decided: tuple[Any, ...] | RuleViolation,
    rest: Sequence[Item],
) -> int:
    if isinstance(decided, RuleViolation):
        what = "the deal" if isinstance(item.event, HandDealt) else "the move in metadata.action"
        field_name = "data" if isinstance(item.event, HandDealt) else "metadata.action"
        found.fail(
            hand,
            Failure(
                "legality",
                item.version,
                field_name,
                f"is refused: {what} breaks the rules ({decided.code}: {decided})",
            ),
        )
        return _same_append(rest)
    for offset, expected in enumerate(decided):
        if offset >= len(rest):
            found.fail(
                hand,
                Failure(
                    "legality",
                    rest[-1].version,
                    "version",
                    f"the move makes a {_tag(expected)} that is not stored after it",
                ),
            )
            return len(rest)
        difference = _difference(rest[offset].version, expected, rest[offset].event)
        if difference is not None:
            found.fail(hand, difference)
    return min(len(decided), len(rest))


def _same_append(rest: Sequence[Item]) -> int:
    """The events a refused move's append holds: those after it with the same metadata, up
    to the next deal."""
    count = 1
    while (
        count < len(rest)
        and rest[count].metadata == rest[0].metadata
        and not isinstance(rest[count].event, HandDealt)
    ):
        count += 1
    return count
