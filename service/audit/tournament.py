"""The audit of a tournament: that its randomness came from what it committed, and that every
table of a duplicate round was dealt the same cards (docs/TOURNAMENTS.md, "Fair seating and
duplicate deals").

Pure over stored rows, like the game audit: the tournament's stream and each of its games'
streams, as read. Each check is re-derived from `domain.tournament.seeds`, never from what
the service says it did:

- `chain`: the tournament stream's hash chain;
- `round_seeds`: each revealed x_r hashes to x_(r-1), from the anchor of `tournament.created`
  (and, where the stored secret x_R is at hand, x_R hashes down to the anchor);
- `seating`: round 1's tables are the shuffle of the players (sorted by name) by the stream
  of `seating_seed(x_1, 1)`, filled in order, the last of the shuffle sitting out; every
  round's games seat the players its `round.started` names;
- `round_chain` (duplicate): each game's seed chain is `round_chain(x_r, hands)`, its
  `game.created` names its tournament, round, table and every peer in table order;
- `seat_seeds` (duplicate): `seat_seeds_from` holds each player's last `player.seed_set`
  before `round.started` (their name where they set none), `seat_seed` is
  `round_seat_seed(r, seat_seeds_from)`, and every seat of every deal used it;
- `decks` (duplicate): hand k of every table was dealt from the same seed, the link of the
  round chain;
- `travellers` (duplicate): every board (hand, seat position) recomputed from the games'
  own `hand.ended` scores, with its matchpoints (the report's `travellers`), and those
  scores agree with the hands and totals `round.closed` recorded for each table;
- `games`: each game passes the game audit (service/audit/audit.py).

Every failure is named with its round, table and game; each check reports its first. The
checks on the games of a round are in tournament_games.py, the report in
tournament_report.py.
"""

from __future__ import annotations

import hashlib
from collections.abc import Mapping, Sequence
from typing import Any

from domain.seed_chain import hashed
from domain.shuffle import Stream
from domain.tournament.matchpoints import Board
from domain.tournament.seeds import round_seat_seed, seating_seed
from domain.variants import high_wins
from events.codec import GENESIS_HASH, CodecError, default_codec
from events.schema.tournament import (
    PlayerRegistered,
    PlayerSeedSet,
    PlayerWithdrawn,
    RoundClosed,
    RoundStarted,
    TournamentCreated,
    TournamentEnded,
)
from events.store import EventStore
from events.stored import StoredRow
from service.audit.audit import RulesVersionRefused, audit_game
from service.audit.chain import link
from service.audit.tournament_games import (
    check_duplicate,
    check_seated,
    check_travellers,
    table_game,
)
from service.audit.tournament_report import (
    CHECKS,
    Findings,
    TableAudit,
    TournamentAuditReport,
    TournamentCheck,
)

PREFIX = "tournament:"


def game_ids(rows: Sequence[StoredRow]) -> list[str]:
    """Every game the tournament's `round.started` events name, in order."""
    codec = default_codec()
    found = []
    for row in rows:
        if row.type != RoundStarted.__struct_config__.tag:
            continue
        try:
            started: Any = codec.decode(row.type, row.schema_version, row.data)
        except CodecError:
            continue  # the audit names the row
        found += [table.game_id for table in started.tables]
    return found


async def read_tournament(
    store: EventStore, tournament_id: str
) -> tuple[list[StoredRow], dict[str, list[StoredRow]]]:
    """The tournament's rows and each of its games' rows, as stored."""
    rows = await store.read_stored(PREFIX + tournament_id)
    return rows, await read_games(store, rows)


async def read_games(store: EventStore, rows: Sequence[StoredRow]) -> dict[str, list[StoredRow]]:
    return {game: await store.read_stored(f"game:{game}") for game in game_ids(rows)}


def audit_tournament(
    tournament_id: str,
    rows: Sequence[StoredRow],
    games: Mapping[str, Sequence[StoredRow]],
    *,
    public: bool = False,
) -> TournamentAuditReport:
    """Audit the tournament whose stream holds `rows`, with its games' rows by game id."""
    found = Findings()
    _chain(tournament_id, rows, found)
    events = _events(rows, found)
    created = next((e for _, e in events if isinstance(e, TournamentCreated)), None)
    tables: list[TableAudit] = []
    started = {e.round: (v, e) for v, e in events if isinstance(e, RoundStarted)}
    closed = {e.round: e for _, e in events if isinstance(e, RoundClosed)}
    boards: list[Board] = []
    ended = any(isinstance(e, TournamentEnded) for _, e in events)
    if created is None:
        found.fail("chain", "tournament.created", "is not the stream's first event")
    else:
        seeds = _round_seeds(created, events, found)
        bots = {e.name: e.bot for _, e in events if isinstance(e, PlayerRegistered) and e.bot}
        if 1 in started and 1 in seeds:
            _first_seating(created, events, started[1], seeds[1], found)
        for number, (version, begun) in sorted(started.items()):
            decoded = {
                t.game_id: table_game(t.game_id, games, found, number, t.table)
                for t in begun.tables
            }
            check_seated(begun, decoded, found, bots)
            if created.duplicate:
                _seat_seeds(events, version, begun, found)
                if number in seeds:
                    check_duplicate(tournament_id, begun, seeds[number], decoded, found)
                elif ended:
                    found.fail("round_seeds", "server_seed", "never revealed", number)
                high = high_wins(created.variant)
                boards += check_travellers(begun, closed.get(number), decoded, high, found)
            for table in begun.tables:
                if games.get(table.game_id):
                    try:
                        report = audit_game(table.game_id, games[table.game_id], public=public)
                    except RulesVersionRefused as refused:
                        found.count("games")
                        found.fail(
                            "games",
                            "rules_version",
                            f"refused: {refused.detail}",
                            number,
                            table.table,
                            table.game_id,
                        )
                        continue
                    found.count("games")
                    tables.append(
                        TableAudit(number, table.table, table.game_id, report.ok, report.failures)
                    )
                    if not report.ok:
                        first = report.failures[0]
                        found.fail(
                            "games", first.check, first.line(), number, table.table, table.game_id
                        )
    checks = []
    for name in CHECKS:
        mine = [f for f in found.failures if f.check == name]
        checks.append(
            TournamentCheck(name, not mine, found.checked[name], mine[0] if mine else None)
        )
    return TournamentAuditReport(
        tournament_id=tournament_id,
        ok=not found.failures,
        duplicate=bool(created and created.duplicate),
        rounds=len(started),
        ended=ended,
        checks=checks,
        tables=tables,
        failures=found.failures,
        travellers=boards,
    )


# ---- the tournament's own stream -------------------------------------------------------


def _chain(tournament_id: str, rows: Sequence[StoredRow], found: Findings) -> None:
    prev = GENESIS_HASH
    stream = PREFIX + tournament_id
    for index, row in enumerate(rows):
        found.count("chain")
        if row.version != index + 1:
            found.fail("chain", "version", f"{row.version} where {index + 1} was due")
            return
        computed = link(stream, prev, row)
        if computed != row.hash:
            found.fail("chain", "hash", f"of version {row.version} is not its event's link")
            return
        prev = computed


def _events(rows: Sequence[StoredRow], found: Findings) -> list[tuple[int, Any]]:
    codec = default_codec()
    events = []
    for row in rows:
        try:
            events.append((row.version, codec.decode(row.type, row.schema_version, row.data)))
        except CodecError as error:
            found.fail("chain", f"version {row.version}", f"does not decode: {error}")
            break
    return events


def _unhex(text: str) -> bytes | None:
    try:
        value = bytes.fromhex(text)
    except ValueError:
        return None
    return value if len(value) == 32 else None


def _round_seeds(
    created: TournamentCreated, events: list[tuple[int, Any]], found: Findings
) -> dict[int, bytes]:
    """x_r of each closed round whose seed holds: SHA-256(x_r) = x_(r-1), from the anchor."""
    anchor = _unhex(created.seed_anchor)
    if anchor is None:
        found.fail("round_seeds", "seed_anchor", "is not 32 bytes of hex")
        return {}
    secret = _unhex(created.seed_secret) if created.seed_secret else None
    if secret is not None and hashed(secret, created.rounds).hex() != created.seed_anchor:
        found.fail("round_seeds", "seed_secret", "does not hash down to the anchor")
    seeds: dict[int, bytes] = {}
    previous = anchor
    closed = sorted((e.round, e) for _, e in events if isinstance(e, RoundClosed))
    for expected, (number, event) in enumerate(closed, 1):
        found.count("round_seeds")
        seed = _unhex(event.server_seed)
        if number != expected:
            found.fail("round_seeds", "round", f"{number} closed where {expected} was due", number)
            break
        if seed is None:
            found.fail("round_seeds", "server_seed", "is not 32 bytes of hex", number)
            break
        if hashlib.sha256(seed).digest() != previous:
            what = "the anchor" if number == 1 else f"round {number - 1}'s seed"
            found.fail("round_seeds", "server_seed", f"does not hash to {what}", number)
            break
        seeds[number] = seed
        previous = seed
    return seeds


def _players_before(events: list[tuple[int, Any]], version: int) -> tuple[list[str], set[str]]:
    """Who had registered before `version`, and who of them had withdrawn."""
    registered = [e.name for v, e in events if v < version and isinstance(e, PlayerRegistered)]
    withdrawn = {e.name for v, e in events if v < version and isinstance(e, PlayerWithdrawn)}
    return registered, withdrawn


def _first_seating(
    created: TournamentCreated,
    events: list[tuple[int, Any]],
    started: tuple[int, RoundStarted],
    seed: bytes,
    found: Findings,
) -> None:
    """Round 1: the active players sorted by name, shuffled by the seating seed's stream;
    the last of the shuffle sit out, the rest fill the tables in order."""
    version, begun = started
    registered, withdrawn = _players_before(events, version)
    active = sorted(name for name in registered if name not in withdrawn)
    order, _ = Stream(seating_seed(seed, 1)).shuffled(active)
    size = created.table_size
    seated = len(order) - len(order) % size
    expected = [order[i : i + size] for i in range(0, seated, size)]
    found.count("seating")
    if tuple(sorted(order[seated:])) != tuple(sorted(begun.byes)):
        found.fail(
            "seating", "byes", f"are {list(begun.byes)}, the shuffle gives {order[seated:]}", 1
        )
    if len(begun.tables) != len(expected):
        found.fail(
            "seating", "tables", f"{len(begun.tables)} where the shuffle fills {len(expected)}", 1
        )
    for index, (table, players) in enumerate(zip(begun.tables, expected, strict=False)):
        if tuple(table.players) != tuple(players):
            found.fail(
                "seating",
                f"tables[{index}].players",
                f"are {list(table.players)}, the shuffle seats {list(players)}",
                1,
                table.table,
                table.game_id,
            )


def _seat_seeds(
    events: list[tuple[int, Any]], version: int, begun: RoundStarted, found: Findings
) -> None:
    """`seat_seeds_from`: each player's last seed set before the round began (else their
    name), every seated player among them; `seat_seed` computed from them."""
    number = begun.round
    registered, _ = _players_before(events, version)
    last: dict[str, str] = {name: name for name in registered}
    for v, event in events:
        if v < version and isinstance(event, PlayerSeedSet):
            last[event.name] = event.seed
    found.count("seat_seeds")
    for index, (name, seed) in enumerate(begun.seat_seeds_from):
        if name not in last:
            found.fail(
                "seat_seeds", f"seat_seeds_from[{index}]", f"names {name!r}, not a player", number
            )
        elif last[name] != seed:
            found.fail(
                "seat_seeds",
                f"seat_seeds_from[{index}]",
                f"gives {name!r} the seed {seed!r}, their last before the round is {last[name]!r}",
                number,
            )
    named = {name for name, _ in begun.seat_seeds_from}
    for table in begun.tables:
        for player in table.players:
            if player not in named:
                found.fail(
                    "seat_seeds", "seat_seeds_from", f"leaves out {player!r}", number, table.table
                )
    if round_seat_seed(number, begun.seat_seeds_from) != begun.seat_seed:
        found.fail("seat_seeds", "seat_seed", "is not round_seat_seed(r, seat_seeds_from)", number)
