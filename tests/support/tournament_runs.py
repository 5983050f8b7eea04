"""Tournaments run in memory for the domain's tests: the decider and the fold, nothing else;
round results are drawn by the caller (no game is played)."""

from __future__ import annotations

import random
from typing import Any

from domain.seed_chain import new_chain
from domain.tournament.decide import CloseRound, Create, Register, StartRound, decide
from domain.tournament.state import Tournament, evolve
from events.schema.common import GameOptions
from events.schema.tournament import RoundStarted, TableResult


class Run:
    """A tournament and the events it stored so far."""

    def __init__(
        self,
        players: int,
        table_size: int = 4,
        rounds: int = 3,
        seating: str = "swiss",
        duplicate: bool = False,
        variant: str = "golf",
        secret: bytes = b"\x07" * 32,
    ) -> None:
        chain = new_chain(secret, 1, rounds)
        self.state = Tournament()
        self.events: list[Any] = []
        create = Create(
            "Test", variant, GameOptions(), table_size, rounds, seating, duplicate, "organiser",
            chain.anchor, chain.secret,
        )  # fmt: skip
        self.do(create)
        for i in range(players):
            self.do(Register(f"p{i:02}", f"hash {i}"))

    def do(self, command: Any) -> tuple[Any, ...]:
        events = decide(self.state, command)
        for event in events:
            self.state = evolve(self.state, event)
        self.events += events
        return events

    def start(self) -> RoundStarted:
        (started,) = self.do(StartRound("t0"))
        assert isinstance(started, RoundStarted)
        return started

    def close(self, rng: random.Random) -> tuple[Any, ...]:
        """Close the open round with random totals (0..40) and the lowest total winning."""
        current = self.state.open_round
        assert current is not None
        results = []
        for table in current.started.tables:
            totals = tuple(rng.randrange(41) for _ in table.players)
            best = min(totals)
            winners = tuple(seat for seat, total in enumerate(totals) if total == best)
            results.append(TableResult(table.table, table.game_id, table.players, totals, 9,
                                       winners))  # fmt: skip
        return self.do(CloseRound(tuple(results)))
