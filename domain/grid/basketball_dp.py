"""Basketball: the seat's own remaining turns solved exactly, in a small abstraction.

Every Basketball turn turns exactly one face-down card face up, and a card placed is placed
face up: so the only slots still open are the face-down ones, peeked cards (known rank) and
unseen cards (a count), and the seat has exactly as many turns left as it has face-down
cards. A turn: a stock card X arrives (distributed as the unseen cards' odds); the seat puts
X on an open slot (X is locked face up, the slot's card leaves) or discards X and turns a
slot face up (a peeked card locks its rank; an unseen card a card drawn from the odds). The
layout's final score is what the seat wants most of: every locked card's value, groups
included (RULES.md: pairs 25, three 40, four 50; aces and kings never group).

`Continuation.value(peeked, unseen, counts)` is the expected final score under the best
play, by expectimax over the seat's own draws, memoized on the state. The abstraction that
keeps it small enough to solve at every decision:

- the odds stay as they are now (the seat's own draws do not deplete them; the other seats'
  discards are not foreseen), and only stock draws are counted (`PILE` 0): a later pile
  card is a choice more, so the value is a little low in every state alike;
- ranks are *tracked* (their face-up count is part of the state, so a later card of theirs
  is worth what it adds to the group) when the caller says so (`follow`; by default the
  grouping ranks face up or peeked). Any other rank counts its single value when locked:
  what two later cards of a rank not followed would make together is not counted. Following
  every rank makes the expectimax exact (a unit test checks it against a plain search over
  whole layouts), at a cost that grows fast with the turns left; following only the ranks
  the seat holds undervalues every fresh card alike, which measured well with 4 or 5 turns
  left and badly with 6 or more (docs/BENCHMARKS.md).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from domain.grid.scoring import BASKETBALL_GROUP, NEVER_GROUP, VALUES

VALUE = VALUES["basketball"]
FRESH = 0.0
"""Mean-field, for ranks not followed: the share of a pair's gain over two single values
(25 - 2 x value) a fresh card locked adds, by the chance that a later draw brings another
of its rank (0: none; a rank followed counts its groups exactly)."""
PILE = 0.0
"""The chance that a later turn also offers the pile's top card, as a card drawn from the
odds (0: the stock alone)."""


def group_worth(rank: str, count: int) -> int:
    """What `count` face-up cards of `rank` score together."""
    value = VALUE[rank]
    if count < 2 or rank in NEVER_GROUP:
        return count * value
    grouped = min(count, 4)
    return BASKETBALL_GROUP[grouped] + (count - grouped) * value


State = tuple[tuple[str, ...], int, tuple[int, ...]]
"""(peeked ranks still face down, sorted; unseen face-down cards; face-up count per tracked
rank)."""


class Continuation:
    """The exact expectimax over the seat's own turns, for one decision's odds."""

    def __init__(
        self,
        odds: Mapping[str, float],
        face_up: Sequence[str],
        peeked: Sequence[str],
        follow: Sequence[str] | None = None,
    ) -> None:
        """`follow`: the ranks to track (default: every grouping rank face up or peeked).
        A rank the odds no longer hold may still grow by a card in hand: it is followed."""
        wanted = {*face_up, *peeked} if follow is None else set(follow)
        self.tracked = tuple(sorted(r for r in wanted if r not in NEVER_GROUP))
        self.slot = {rank: i for i, rank in enumerate(self.tracked)}
        self.odds = tuple((rank, p) for rank, p in sorted(odds.items()) if p > 0)
        self.chance = dict(self.odds)
        self.memo: dict[State, float] = {}
        self._cards: dict[int, list[tuple[float, int | None, float]]] = {}

    def counts(self, face_up: Sequence[str]) -> tuple[int, ...]:
        """The face-up count of every tracked rank."""
        return tuple(sum(1 for r in face_up if r == rank) for rank in self.tracked)

    def single(self, rank: str, later: int) -> float:
        """What a card of an untracked `rank` adds when locked with `later` turns still to
        come: its value, and (`FRESH`) a share of what a later card of its rank would add
        to it as a pair, by the chance that one comes."""
        value = float(VALUE[rank])
        if not FRESH or rank in NEVER_GROUP:
            return value
        chance = 1.0 - (1.0 - self.chance.get(rank, 0.0)) ** later
        return value + FRESH * chance * max(0.0, 25.0 - 2.0 * value)

    def cards(self, later: int) -> list[tuple[float, int | None, float]]:
        """Per rank the stock may give: its chance, its tracked index (None: untracked)
        and what it adds when locked untracked with `later` turns to come."""
        if later not in self._cards:
            self._cards[later] = [
                (p, self.slot.get(rank), self.single(rank, later)) for rank, p in self.odds
            ]
        return self._cards[later]

    def locked(
        self, rank: str, counts: tuple[int, ...], later: int
    ) -> tuple[float, tuple[int, ...]]:
        """A card of `rank` turned face up for good with `later` turns to come: the points
        it adds now (an untracked rank: `single`) and the tracked counts after."""
        at = self.slot.get(rank)
        if at is None:
            return self.single(rank, later), counts
        return 0.0, (*counts[:at], counts[at] + 1, *counts[at + 1 :])

    def final(self, counts: tuple[int, ...]) -> float:
        """The tracked ranks' score once every card is face up."""
        return float(sum(group_worth(r, n) for r, n in zip(self.tracked, counts, strict=True)))

    def placed(self, rank: str, state: State, slot: str | None) -> float:
        """A card of `rank` put face up on the open slot `slot` (a peeked rank; None: an
        unseen card), then the best play after."""
        peeked, unseen, counts = state
        now, after = self.locked(rank, counts, len(peeked) + unseen - 1)
        if slot is None:
            return now + self.value(peeked, unseen - 1, after)
        return now + self.value(_without(peeked, slot), unseen, after)

    def turned(self, state: State, slot: str | None) -> float:
        """The open slot `slot` turned face up after a discard, then the best play after:
        a peeked card locks its rank, an unseen card a rank drawn from the odds."""
        if slot is not None:
            return self.placed(slot, state, slot)
        return sum(p * self.placed(rank, state, None) for rank, p in self.odds)

    def value(self, peeked: tuple[str, ...], unseen: int, counts: tuple[int, ...]) -> float:
        """The expected final score (the tracked ranks' groups, plus every untracked card
        locked from here on) under the seat's best play over its remaining turns."""
        if not peeked and not unseen:
            return self.final(counts)
        key = (peeked, unseen, counts)
        memo = self.memo
        if key in memo:
            return memo[key]
        kinds = tuple(dict.fromkeys(peeked))
        rests = [_without(peeked, rank) for rank in kinds]

        # A card placed on an open slot: that slot's state after, by the counts it leaves.
        def after(counts_: tuple[int, ...]) -> list[float]:
            out = [self.value(rest, unseen, counts_) for rest in rests]
            if unseen:
                out.append(self.value(peeked, unseen - 1, counts_))
            return out

        stay = after(counts)
        """Untracked cards leave the counts as they are: one set of children serves all."""
        best_stay = max(stay)
        keeps: list[tuple[float, float]] = []
        on_unseen = 0.0
        later = len(peeked) + unseen - 1
        for p, at, single in self.cards(later):
            if at is None:
                keeps.append((p, single + best_stay))
                if unseen:
                    on_unseen += p * (single + stay[-1])
            else:
                grown = after((*counts[:at], counts[at] + 1, *counts[at + 1 :]))
                keeps.append((p, max(grown)))
                if unseen:
                    on_unseen += p * grown[-1]
        turn = on_unseen if unseen else float("-inf")
        for rank, rest in zip(kinds, rests, strict=True):
            now, grown_counts = self.locked(rank, counts, later)
            turn = max(turn, now + self.value(rest, unseen, grown_counts))
        total = sum(p * (kept if kept > turn else turn) for p, kept in keeps)
        if PILE:
            # The pile's card, when it beats the stock's: it must be kept, on its best slot.
            total += PILE * sum(p * max(0.0, kept - total) for p, kept in keeps)
        memo[key] = total
        return total


def _without(peeked: tuple[str, ...], rank: str) -> tuple[str, ...]:
    at = peeked.index(rank)
    return peeked[:at] + peeked[at + 1 :]
