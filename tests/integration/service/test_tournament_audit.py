"""The tournament audit on a real store: an honest duplicate tournament holds on every check;
each kind of forgery (a wrong round seed, a changed seat seed, another deck at one table,
a seating the shuffle does not give, a game's seed chain not the round's) is named with its
round, table and game.

A forgery here is consistent: the forged rows are chained again, as a forger with write
access to the store would, so each check must catch it on its own, not by a broken link."""

from __future__ import annotations

import json
from collections.abc import AsyncIterator, Callable, Sequence
from pathlib import Path
from typing import Any

import msgspec
import pytest

from domain.tournament.matchpoints import Board, TableHands, travellers
from events.codec import GENESIS_HASH
from events.store import EmbeddedStore, EventStore, PostgresStore
from events.stored import StoredRow
from service.audit.chain import link
from service.audit.tournament import audit_tournament, read_tournament
from service.audit.tournament_report import TournamentAuditReport, report_lines
from service.ops.metrics import Metrics
from service.play.games import GameService
from tests.support.duplicate_rounds import Tournament, run_tournament

pytestmark = pytest.mark.integration

Rows = list[StoredRow]


@pytest.fixture(scope="module", params=["postgres", "embedded"])
async def played(
    request: pytest.FixtureRequest,
    tmp_path_factory: pytest.TempPathFactory,
    database_url: str,
) -> AsyncIterator[tuple[Tournament, Rows, dict[str, Rows]]]:
    """One honest tournament per store: 5 players at tables of 2 (a bye each round), two
    rounds of duplicate golf, two hands a game."""
    if request.param == "postgres":
        store: EventStore = await PostgresStore.open(database_url)
    else:
        store = await EmbeddedStore.open(Path(tmp_path_factory.mktemp("tournament-audit")))
    try:
        tournament = await run_tournament(GameService(store, Metrics()))
        rows, games = await read_tournament(store, tournament.tournament_id)
        yield tournament, rows, games
    finally:
        await store.close()


def forged(
    stream: str, rows: Sequence[StoredRow], kind: str, change: Callable[[Any], None], nth: int = 0
) -> Rows:
    """The rows with the `nth` event of type `kind` changed by `change` (on its JSON), and
    the chain made again from there."""
    out, prev, seen = [], GENESIS_HASH, 0
    for row in rows:
        if row.type == kind:
            if seen == nth:
                data = json.loads(row.data)
                change(data)
                row = msgspec.structs.replace(row, data=json.dumps(data))
            seen += 1
        row = msgspec.structs.replace(row, hash=link(stream, prev, row))
        prev = row.hash
        out.append(row)
    return out


def failed(report: TournamentAuditReport) -> set[tuple[str, int | None, int | None]]:
    return {(f.check, f.round, f.table) for f in report.failures}


def test_an_honest_duplicate_tournament_holds_on_every_check(
    played: tuple[Tournament, Rows, dict[str, Rows]],
) -> None:
    tournament, rows, games = played
    report = audit_tournament(tournament.tournament_id, rows, games)
    assert report.ok, report_lines(report)
    assert report.duplicate
    assert report.ended
    assert report.rounds == 2
    checked = {check.name: check.checked for check in report.checks}
    assert checked["chain"] == len(rows)
    assert checked["round_seeds"] == 2
    assert checked["seating"] == 1 + 4  # round 1 against the shuffle, each game's seats
    assert checked["round_chain"] == 4
    assert checked["decks"] == 4 * 2  # every deal of every table
    assert checked["games"] == 4
    assert checked["travellers"] == 2 * 2 * 2  # rounds x hands x seat positions
    assert [(t.round, t.table) for t in report.tables] == [(1, 1), (1, 2), (2, 1), (2, 2)]
    assert report_lines(report)[-1] == "everything holds"
    assert report.travellers == recomputed(tournament, games)


def recomputed(tournament: Tournament, games: dict[str, Rows]) -> list[Board]:
    """Every board from each game's hand.ended rows, read here as plain JSON."""
    boards = []
    for number, round_ in enumerate(tournament.rounds, start=1):
        tables = [
            TableHands(
                number_at,
                table.game_id,
                table.players,
                tuple(
                    tuple(json.loads(row.data)["scores"])
                    for row in games[table.game_id]
                    if row.type == "hand.ended"
                ),
            )
            for number_at, table in enumerate(round_.tables, start=1)
        ]
        boards += travellers(number, tables, high_wins=False)  # golf: low wins
    return boards


def test_results_that_are_not_the_games_hand_scores_are_named(
    played: tuple[Tournament, Rows, dict[str, Rows]],
) -> None:
    tournament, rows, games = played
    stream = f"tournament:{tournament.tournament_id}"

    def totals(data: dict[str, Any]) -> None:
        data["results"][0]["totals"][0] -= 1

    report = audit_tournament(
        tournament.tournament_id, forged(stream, rows, "round.closed", totals, nth=1), games
    )
    named = [f for f in report.failures if f.check == "travellers"]
    assert [(f.round, f.table) for f in named] == [(2, 1)]
    assert "differ from the sums of the game's hand scores" in named[0].detail


def test_a_wrong_round_seed_is_named(played: tuple[Tournament, Rows, dict[str, Rows]]) -> None:
    tournament, rows, games = played
    stream = f"tournament:{tournament.tournament_id}"

    def seed(data: dict[str, Any]) -> None:
        data["server_seed"] = "ab" * 32

    report = audit_tournament(
        tournament.tournament_id, forged(stream, rows, "round.closed", seed, nth=1), games
    )
    assert not report.ok
    first = report.failures[0]
    assert (first.check, first.round, first.field) == ("round_seeds", 2, "server_seed")
    assert "does not hash to round 1's seed" in first.detail


def test_a_changed_seat_seed_is_named(played: tuple[Tournament, Rows, dict[str, Rows]]) -> None:
    tournament, rows, games = played
    stream = f"tournament:{tournament.tournament_id}"

    def seat_seed(data: dict[str, Any]) -> None:
        data["seat_seed"] = "0" * 64

    report = audit_tournament(
        tournament.tournament_id, forged(stream, rows, "round.started", seat_seed), games
    )
    assert ("seat_seeds", 1, None) in failed(report)  # not round_seat_seed(1, ...)
    assert ("seat_seeds", 1, 1) in failed(report)  # and not what table 1 dealt with
    assert all(f.round == 1 for f in report.failures)

    def from_seeds(data: dict[str, Any]) -> None:
        data["seat_seeds_from"][1][1] = "a seed bob never set"

    report = audit_tournament(
        tournament.tournament_id, forged(stream, rows, "round.started", from_seeds), games
    )
    fields = {f.field for f in report.failures if f.check == "seat_seeds"}
    assert "seat_seeds_from[1]" in fields
    assert "seat_seed" in fields


def test_another_deck_at_one_table_is_named(
    played: tuple[Tournament, Rows, dict[str, Rows]],
) -> None:
    tournament, rows, games = played
    table = tournament.rounds[0].tables[1]
    stream = f"game:{table.game_id}"

    def deck(data: dict[str, Any]) -> None:
        data["seed"] = "cd" * 32

    dishonest = dict(games) | {
        table.game_id: forged(stream, games[table.game_id], "hand.dealt", deck)
    }
    report = audit_tournament(tournament.tournament_id, rows, dishonest)
    decks = [f for f in report.failures if f.check == "decks"]
    assert [(f.round, f.table, f.game_id, f.field) for f in decks] == [
        (1, 2, table.game_id, "hand 1 seed")
    ]
    assert ("games", 1, 2) in failed(report)  # its own audit: the seed's deck is not dealt


def test_a_seating_the_shuffle_does_not_give_is_named(
    played: tuple[Tournament, Rows, dict[str, Rows]],
) -> None:
    tournament, rows, games = played
    stream = f"tournament:{tournament.tournament_id}"

    def swap(data: dict[str, Any]) -> None:
        first, second = data["tables"][0], data["tables"][1]
        first["players"][0], second["players"][0] = second["players"][0], first["players"][0]

    report = audit_tournament(
        tournament.tournament_id, forged(stream, rows, "round.started", swap), games
    )
    seating = [f for f in report.failures if f.check == "seating"]
    assert {(f.round, f.field) for f in seating} >= {(1, "tables[0].players")}
    assert all(f.round == 1 for f in report.failures)


def test_a_game_dealing_from_another_chain_is_named(
    played: tuple[Tournament, Rows, dict[str, Rows]],
) -> None:
    tournament, rows, games = played
    table = tournament.rounds[1].tables[0]

    def anchor(data: dict[str, Any]) -> None:
        data["seed_anchor"] = "ef" * 32

    dishonest = dict(games) | {
        table.game_id: forged(f"game:{table.game_id}", games[table.game_id], "game.created", anchor)
    }
    report = audit_tournament(tournament.tournament_id, rows, dishonest)
    assert ("round_chain", 2, 1) in failed(report)


def test_a_game_missing_from_the_store_is_named(
    played: tuple[Tournament, Rows, dict[str, Rows]],
) -> None:
    tournament, rows, games = played
    table = tournament.rounds[0].tables[0]
    report = audit_tournament(
        tournament.tournament_id, rows, {k: v for k, v in games.items() if k != table.game_id}
    )
    assert ("games", 1, 1) in failed(report)


def test_a_player_seated_other_than_registered_a_bot_or_a_person_is_named(
    played: tuple[Tournament, Rows, dict[str, Rows]],
) -> None:
    """A bot player's seats are bot seats of its level, and only a bot player's are."""
    tournament, rows, games = played
    stream = f"tournament:{tournament.tournament_id}"

    def as_bot(data: dict[str, Any]) -> None:
        data["bot"], data["token_hash"] = "greedy", ""

    # A player who sat at a table: the first registered may have had the bye in both rounds
    # (this history seats round 2 by the reversed shuffle of its own seed, 1 run in 25),
    # and a bye claims no seat to find wrong.
    seated = tournament.rounds[0].tables[0].players[0]
    registered = [json.loads(r.data)["name"] for r in rows if r.type == "player.registered"]
    as_registered = registered.index(seated)
    report = audit_tournament(
        tournament.tournament_id,
        forged(stream, rows, "player.registered", as_bot, as_registered),
        games,
    )
    assert {f.field for f in report.failures if f.check == "seating"} == {"seat.claimed bot"}
    table = tournament.rounds[0].tables[0]
    claimed = forged(f"game:{table.game_id}", games[table.game_id], "seat.claimed", as_bot)
    report = audit_tournament(
        tournament.tournament_id, rows, dict(games) | {table.game_id: claimed}
    )
    assert ("seating", 1, 1) in failed(report)


def test_a_game_under_a_rules_version_the_audit_does_not_implement_is_refused_by_name(
    played: tuple[Tournament, Rows, dict[str, Rows]],
) -> None:
    tournament, rows, games = played
    table = tournament.rounds[1].tables[0]

    def version(data: dict[str, Any]) -> None:
        data["rules_version"] = "golf/7"

    stream = f"game:{table.game_id}"
    other = dict(games) | {
        table.game_id: forged(stream, games[table.game_id], "game.created", version)
    }
    report = audit_tournament(tournament.tournament_id, rows, other)
    refused = [f for f in report.failures if f.check == "games"]
    assert [(f.round, f.table, f.game_id, f.field) for f in refused] == [
        (2, 1, table.game_id, "rules_version")
    ]
    assert "'golf/7', which this verifier does not implement" in refused[0].detail
