"""What the audit of a tournament finds, as typed values (GET /tournaments/{id}/audit and
`fairway audit-tournament` give one): each check with its first failure, each table's game
audit in short, the failures gathered while the checks run, and the report as lines for an
operator's terminal."""

from __future__ import annotations

from typing import Literal

import msgspec

from domain.tournament.matchpoints import Board
from service.audit.report import Failure

TournamentCheckName = Literal[
    "chain", "round_seeds", "seating", "round_chain", "seat_seeds", "decks", "travellers", "games"
]
CHECKS: tuple[TournamentCheckName, ...] = (
    "chain",
    "round_seeds",
    "seating",
    "round_chain",
    "seat_seeds",
    "decks",
    "travellers",
    "games",
)


class TournamentFailure(msgspec.Struct, frozen=True):
    check: TournamentCheckName
    round: int | None
    """The round (None: the tournament as a whole)."""
    table: int | None
    game_id: str | None
    field: str
    """What does not hold: `server_seed`, `tables[1].players`, `hand 2 seed`..."""
    detail: str

    def line(self) -> str:
        where = [
            f"round {self.round}" if self.round is not None else "tournament",
            *([f"table {self.table}"] if self.table is not None else []),
            *([f"game {self.game_id}"] if self.game_id is not None else []),
        ]
        return f"{', '.join(where)}: {self.field} {self.detail}"


class TournamentCheck(msgspec.Struct, frozen=True):
    name: TournamentCheckName
    ok: bool
    checked: int
    """How many items (links, rounds, tables, games, deals) the check looked at."""
    failure: TournamentFailure | None = None


class TableAudit(msgspec.Struct, frozen=True):
    """One table's game audit, in short."""

    round: int
    table: int
    game_id: str
    ok: bool
    failures: list[Failure]


class TournamentAuditReport(msgspec.Struct, frozen=True):
    tournament_id: str
    ok: bool
    """True when every check holds."""
    duplicate: bool
    rounds: int
    """Rounds started."""
    ended: bool
    checks: list[TournamentCheck]
    tables: list[TableAudit]
    failures: list[TournamentFailure]
    """Every failure found, by round and table."""
    travellers: list[Board] = []
    """Duplicate deals: every board of every round (hand, seat position), each table's
    result on it and its matchpoints, recomputed from the games' own `hand.ended` events
    (domain/tournament/matchpoints.py): what GET /tournaments/{id}/rounds/{n}/travellers
    must show."""


class Findings:
    """The failures found so far, and what each check examined."""

    def __init__(self) -> None:
        self.failures: list[TournamentFailure] = []
        self.checked: dict[TournamentCheckName, int] = dict.fromkeys(CHECKS, 0)

    def fail(
        self,
        check: TournamentCheckName,
        field: str,
        detail: str,
        round_: int | None = None,
        table: int | None = None,
        game_id: str | None = None,
    ) -> None:
        self.failures.append(TournamentFailure(check, round_, table, game_id, field, detail))

    def count(self, check: TournamentCheckName, n: int = 1) -> None:
        self.checked[check] += n


def report_lines(report: TournamentAuditReport) -> list[str]:
    """The report as lines for an operator's terminal (as service/audit/text.py)."""
    kind = "duplicate deals" if report.duplicate else "own deals"
    state = "ended" if report.ended else "not ended"
    lines = [f"tournament {report.tournament_id} ({kind}), {report.rounds} rounds, {state}"]
    for check in report.checks:
        if check.ok:
            lines.append(f"ok      {check.name} ({check.checked} checked)")
        else:
            assert check.failure is not None
            lines.append(f"FAILED  {check.name}: {check.failure.line()}")
    for table in report.tables:
        note = (
            "ok" if table.ok else f"FAILED ({table.failures[0].check}: {table.failures[0].line()})"
        )
        lines.append(
            f"        round {table.round} table {table.table} game {table.game_id}: {note}"
        )
    lines += [f"failure ({f.check}): {f.line()}" for f in report.failures]
    lines.append("everything holds" if report.ok else f"{len(report.failures)} failure(s)")
    return lines
