"""Who sits where in a round, and who sits it out (docs/TOURNAMENTS.md, "Seating and byes").

Every table is full (`table_size` players, never fewer than the variant's minimum); the
players left over take a bye. Withdrawn players are never seated.

- Byes go to the players with the fewest byes so far; among them, in swiss, the lowest
  ranked; otherwise the last in the round's random order. Round 1 thus gives its byes to
  the last players of its shuffle.
- Round 1 is random: the players sorted by name, shuffled by the stream of the round's
  seating seed (domain/shuffle.py), the tables filled in that order.
- `swiss`: by the standings after the closed rounds, best first, the tables filled in
  order: the leaders play each other.
- `rotation`: each table is filled greedily so that as few pairs as possible meet again. A
  table starts with the unseated player who has the most meetings with the others still
  unseated, each repeat counted (the hardest to place), then takes, one at a time, the
  unseated player who has met those at the table the fewest times; ties go by name.
  (Counting distinct opponents met instead seats as well: over 300 random histories of 16
  players at tables of 4 for 5 rounds, 106.5 distinct pairs against 106.6.) Deterministic: the same
  history always gives the same seating.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable, Sequence

import msgspec

from domain.errors import RuleViolation
from domain.shuffle import Stream
from domain.tournament.seeds import seating_seed
from domain.tournament.standings import standings
from domain.tournament.state import Tournament
from domain.variants import high_wins

SEATINGS = ("swiss", "rotation")


class Seating(msgspec.Struct, frozen=True):
    tables: tuple[tuple[str, ...], ...]
    """Each table's players in seat order, tables in order."""
    byes: tuple[str, ...]
    """By name."""


def random_order(players: Iterable[str], round_seed: bytes, round_number: int) -> tuple[str, ...]:
    """The round's random order: the players sorted by name, shuffled by the seating seed."""
    order, _ = Stream(seating_seed(round_seed, round_number)).shuffled(sorted(players))
    return order


def seat_round(state: Tournament, round_seed: bytes) -> Seating:
    """The seating of the tournament's next round, from x_r (`round_seed`)."""
    config = state.config
    number = state.next_round
    active = state.active()
    size = config.table_size
    tables = len(active) // size
    if tables == 0:
        raise RuleViolation(
            "not_enough_players",
            f"{len(active)} active player(s): a table needs {size}",
        )
    shuffled = random_order(active, round_seed, number)
    if number > 1 and config.seating == "swiss":
        rows = standings(
            [p.name for p in state.players],
            state.results(),
            high_wins(config.variant),
            state.withdrawn(),
        )
        order = tuple(row.player for row in rows if row.player in set(active))
    else:
        order = shuffled
    byes = choose_byes(order, state.byes_so_far(), len(active) - tables * size)
    seated = [player for player in order if player not in byes]
    if number > 1 and config.seating == "rotation":
        return Seating(rotation_tables(seated, meetings(state), size), tuple(sorted(byes)))
    return Seating(chunks(seated, size), tuple(sorted(byes)))


def choose_byes(order: Sequence[str], byes_so_far: dict[str, int], count: int) -> set[str]:
    """`count` players from `order` (best or first at the front): the fewest byes so far
    first, then the last in `order`."""
    position = {player: i for i, player in enumerate(order)}
    ranked = sorted(order, key=lambda p: (byes_so_far.get(p, 0), -position[p]))
    return set(ranked[:count])


def chunks(players: Sequence[str], size: int) -> tuple[tuple[str, ...], ...]:
    return tuple(tuple(players[i : i + size]) for i in range(0, len(players), size))


def meetings(state: Tournament) -> Counter[tuple[str, str]]:
    """How often each pair of players (sorted) has sat at one table so far."""
    met: Counter[tuple[str, str]] = Counter()
    for played in state.rounds:
        for table in played.started.tables:
            met.update(pairs(table.players))
    return met


def pairs(players: Sequence[str]) -> list[tuple[str, str]]:
    ordered = sorted(players)
    return [(a, b) for i, a in enumerate(ordered) for b in ordered[i + 1 :]]


def rotation_tables(
    players: Sequence[str], met: Counter[tuple[str, str]], size: int
) -> tuple[tuple[str, ...], ...]:
    """Fill tables of `size` greedily, fewest repeated pairs first (see the module)."""

    def times(a: str, b: str) -> int:
        return met[(a, b) if a < b else (b, a)]

    unseated = sorted(players)
    tables: list[tuple[str, ...]] = []
    while unseated:
        first = min(unseated, key=lambda p: (-sum(times(p, q) for q in unseated if q != p), p))
        table = [first]
        unseated.remove(first)
        while len(table) < size:
            chosen = min(unseated, key=lambda p: (sum(times(p, q) for q in table), p))
            table.append(chosen)
            unseated.remove(chosen)
        tables.append(tuple(table))
    return tuple(tables)
