"""One move or deal checked: decided again on the state before it, compared with what is
stored, and any difference named by the event's version and field.

When the recorded move does not give the stored events, another move may: then the
metadata and the data disagree, and the other events of the same append (which carry the
same metadata) tell which was altered; a lone event cannot, and both are named.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import msgspec

from domain.decider import Decider
from domain.errors import RuleViolation
from events.schema.common import Act, GameEnded, HandDealt, HandEnded
from events.schema.shedding import (
    BlindCardTurned,
    CardsPlayed,
    ChooseStacks,
    EndPlay,
    PlayBlind,
    PlayCards,
    StacksChosen,
)
from service.audit.found import Item, Walk
from service.audit.report import CheckName, Failure
from service.play.record import ACTION

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
SEED_FIELDS = frozenset({"seed", "commitment", "server_seed", "seat_seeds", "nonce"})
"""Of a deal, left to the commitment check (domain/fairness.py), which knows which of them
the seats and the seed chain fix."""


def tag(event: Any) -> str:
    return str(event.__struct_config__.tag)


def _builtins(value: Any) -> Any:
    return msgspec.to_builtins(value)


def _check_for(event: Any, name: str) -> CheckName:
    if isinstance(event, GameEnded):
        return "winners"
    if isinstance(event, HandEnded):
        return "scores"
    if name in DECK_FIELDS.get(tag(event), ()):
        return "deck"
    return "legality"


def _difference(version: int, expected: Any, found: Any) -> Failure | None:
    """The first field in which the stored event differs from the re-decided one."""
    if type(expected) is not type(found):
        return Failure(
            "legality",
            version,
            "type",
            f"differs from the re-decided event (expected {tag(expected)}, found {tag(found)})",
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


def decide(decider: Decider, state: Any, command: Any) -> tuple[Any, ...] | RuleViolation:
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
            decided = decide(decider, state, Act(other, action))
            if not isinstance(decided, RuleViolation) and _matches(decided, stored):
                return "metadata.seat", other, len(decided)
    try:
        listed = decider.legal_actions(state, seat)
    except Exception:  # as in `decide` above: a forged history's state may break the rules
        listed = ()  # code; this only looks for a better name for a failure already found
    candidates = [a for a in listed if isinstance(a, _concrete(decider))] + _inferred(stored)
    for candidate in candidates:
        if candidate == action:
            continue
        decided = decide(decider, state, Act(seat, candidate))
        if not isinstance(decided, RuleViolation) and _matches(decided, stored):
            return "metadata.action", _builtins(candidate), len(decided)
    return None


_ACTIONS: dict[tuple[str, bytes], Any] = {}
"""Recorded actions decoded, by variant and JSON: a game repeats a few dozen of them."""


def _action(decider: Decider, raw: Any) -> Any:
    """The recorded action (its JSON shape) as the variant's action; ValidationError when
    it is none of them."""
    key = (decider.name, msgspec.json.encode(raw))
    action = _ACTIONS.get(key)
    if action is None:
        action = msgspec.convert(raw, decider.action_type)
        if len(_ACTIONS) < 10_000:
            _ACTIONS[key] = action
    return action


def _concrete(decider: Decider) -> tuple[type, ...]:
    return tuple(getattr(decider.action_type, "__args__", (decider.action_type,)))


def move(found: Walk, hand: int, decider: Decider, state: Any, rest: Sequence[Item]) -> int:
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
        action = _action(decider, raw)
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
    decided = decide(decider, state, Act(seat, action))
    if not isinstance(decided, RuleViolation) and _matches(decided, rest):
        for other in rest[1 : len(decided)]:
            if other.metadata != item.metadata:  # the move holds: this copy was altered
                detail = f"differs from the other events of its move (version {item.version})"
                found.fail(hand, Failure("legality", other.version, "metadata", detail))
                break
        return len(decided)
    players = int(state.players)
    explained = _explain(decider, state, seat, action, players, rest)
    if explained is None:
        return compare(found, hand, item, decided, rest)
    name, expected, count = explained
    found_value = seat if name == "metadata.seat" else raw
    moved = (
        f"the move the stored events record (expected {_show(expected)}, "
        f"found {_show(found_value)})"
    )
    if any(other.metadata != item.metadata for other in rest[1:count]):
        found.fail(hand, Failure("legality", item.version, name, f"differs from {moved}"))
        return count  # its own append's other events still carry the move recorded
    difference = None
    if not isinstance(decided, RuleViolation):
        difference = next(
            (
                d
                for e, s in zip(decided, rest, strict=False)
                if e != s.event and (d := _difference(s.version, e, s.event)) is not None
            ),
            None,
        )
    if difference is not None and count > 1:
        found.fail(hand, difference)  # the append's events agree on the move: the data changed
        return count
    where = name if difference is None else f"{difference.field} or {name}"
    at = item.version if difference is None else difference.version
    found.fail(
        hand,
        Failure(
            "legality",
            at,
            where,
            f"disagree: {moved}; the move alone cannot tell which was altered",
        ),
    )
    return count


def compare(
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
                    f"the move makes a {tag(expected)} that is not stored after it",
                ),
            )
            return len(rest)
        if expected == rest[offset].event:
            continue
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
