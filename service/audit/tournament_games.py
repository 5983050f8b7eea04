"""The tournament audit's checks on the games of a round: each table's game seats the
players the round names, and in a duplicate round each game's seed chain is the round's
chain, its `game.created` names its place, and every table was dealt the same decks."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import msgspec

from domain.seed_chain import SeedChain
from domain.tournament.matchpoints import Board, TableHands, travellers
from domain.tournament.seeds import round_chain
from events.schema.common import HandDealt, HandEnded
from events.schema.lobby import GameCreated, SeatClaimed
from events.schema.tournament import RoundClosed, RoundStarted
from events.stored import StoredRow
from service.audit.audit import decode
from service.audit.tournament_report import Findings, TournamentCheckName


class TableGame(msgspec.Struct):
    """What the checks read of one table's game: its creation, who sits where, its deals."""

    created: GameCreated
    names: list[str]
    deals: dict[int, HandDealt]
    bots: list[str] = msgspec.field(default_factory=list)
    """Each seat's bot level ("" for a person's seat)."""
    scores: list[tuple[int, ...]] = msgspec.field(default_factory=list)
    """Each ended hand's scores by seat, in order (`hand.ended`)."""


def table_game(
    game_id: str, games: Mapping[str, Sequence[StoredRow]], found: Findings, number: int, table: int
) -> TableGame | None:
    """The table's game as stored; None, with the failure named, when it is not in the
    store or does not begin with `game.created`."""
    rows = games.get(game_id)
    if not rows:
        found.fail("games", "game", "is not in the store", number, table, game_id)
        return None
    items, _ = decode(rows)  # a row that does not decode: the game audit names it
    if not items or not isinstance(items[0].event, GameCreated):
        found.fail("games", "game.created", "is not the game's first event", number, table, game_id)
        return None
    names: dict[int, str] = {}
    bots: dict[int, str] = {}
    deals: dict[int, HandDealt] = {}
    scores: list[tuple[int, ...]] = []
    for item in items:
        if isinstance(item.event, SeatClaimed):
            names[item.event.seat] = item.event.name
            bots[item.event.seat] = item.event.bot
        elif isinstance(item.event, HandDealt):
            deals[item.event.hand] = item.event
        elif isinstance(item.event, HandEnded):
            scores.append(item.event.scores)
    seats = range(items[0].event.seats)
    return TableGame(
        items[0].event,
        [names.get(s, "") for s in seats],
        deals,
        [bots.get(s, "") for s in seats],
        scores,
    )


def check_seated(
    begun: RoundStarted,
    games: dict[str, TableGame | None],
    found: Findings,
    bots: Mapping[str, str],
) -> None:
    """Each table's game seats the players the round names, in table order; a bot
    player's seat is a bot seat of its registered level, and only a bot player's is."""
    for table in begun.tables:
        game = games[table.game_id]
        if game is None:
            continue
        found.count("seating")
        if tuple(game.names) != tuple(table.players):
            found.fail(
                "seating",
                "seat.claimed",
                f"seat {game.names}, the round seats {list(table.players)}",
                begun.round,
                table.table,
                table.game_id,
            )
        registered = [bots.get(player, "") for player in table.players]
        if game.bots != registered:
            found.fail(
                "seating",
                "seat.claimed bot",
                f"seat bots {game.bots}, the players registered {registered}",
                begun.round,
                table.table,
                table.game_id,
            )


def check_duplicate(
    tournament_id: str,
    begun: RoundStarted,
    seed: bytes,
    games: dict[str, TableGame | None],
    found: Findings,
) -> None:
    number = begun.round
    peers = tuple(table.game_id for table in begun.tables)
    reference: dict[int, tuple[int, str]] = {}
    for table in begun.tables:
        game = games[table.game_id]
        if game is None:
            continue
        created = game.created

        def fail(check: TournamentCheckName, field: str, detail: str) -> None:
            found.fail(check, field, detail, number, table.table, table.game_id)  # noqa: B023

        found.count("round_chain")
        place = (created.tournament, created.round, created.table, created.peers)
        if place != (tournament_id, number, table.table, peers):
            fail(
                "round_chain",
                "game.created",
                "does not name this tournament, round, table and peers",
            )
        chain = round_chain(seed, max(created.seed_hands, 1))
        if created.seed_anchor != chain.anchor:
            fail("round_chain", "seed_anchor", "is not the anchor of round_chain(x_r, hands)")
        if created.seed_secret and created.seed_secret != chain.secret:
            fail("round_chain", "seed_secret", "is not the secret of round_chain(x_r, hands)")
        for hand, dealt in sorted(game.deals.items()):
            found.count("decks")
            if dealt.seat_seeds != (begun.seat_seed,) * created.seats:
                fail("seat_seeds", f"hand {hand} seat_seeds", "are not the round's seat seed")
            _same_deck(chain, hand, dealt, reference, table.table, fail)


def _same_deck(
    chain: SeedChain,
    hand: int,
    dealt: HandDealt,
    reference: dict[int, tuple[int, str]],
    table: int,
    fail: Any,
) -> None:
    """Hand `hand` dealt from the round chain's link, with the seed every table used."""
    if (
        dealt.server_seed
        and chain.covers(hand)
        and dealt.server_seed != chain.server_seed(hand).hex()
    ):
        fail("decks", f"hand {hand} server_seed", "is not the round chain's link")
    first = reference.setdefault(hand, (table, dealt.seed))
    if dealt.seed != first[1]:
        fail("decks", f"hand {hand} seed", f"differs from table {first[0]}'s: another deck")


def check_travellers(
    begun: RoundStarted,
    closed: RoundClosed | None,
    games: Mapping[str, TableGame | None],
    high_wins: bool,
    found: Findings,
) -> list[Board]:
    """Every board of a duplicate round recomputed from its games' `hand.ended` scores; and
    those scores hold what `round.closed` recorded of each table (its hands, its totals),
    the results the standings were computed from."""
    tables = []
    recorded = {r.game_id: r for r in closed.results} if closed is not None else {}
    for table in begun.tables:
        game = games.get(table.game_id)
        if game is None:
            continue
        tables.append(TableHands(table.table, table.game_id, table.players, tuple(game.scores)))
        result = recorded.get(table.game_id)
        if result is None:
            continue
        sums = tuple(sum(column) for column in zip(*game.scores, strict=True))
        place = (begun.round, table.table, table.game_id)
        if len(game.scores) != result.hands:
            detail = f"differ from the game's hand.ended events ({len(game.scores)} hands)"
            found.fail("travellers", f"round.closed hands {result.hands}", detail, *place)
        elif game.scores and sums != tuple(result.totals):
            detail = f"differ from the sums of the game's hand scores ({list(sums)})"
            found.fail("travellers", f"round.closed totals {list(result.totals)}", detail, *place)
    boards = travellers(begun.round, tables, high_wins)
    found.count("travellers", len(boards))
    return boards
