"""Player ratings across every finished game, tournament or casual: OpenSkill's
Plackett-Luce model (Weng and Lin's Bayesian approximation for multiplayer rankings,
docs/TOURNAMENTS.md, "Ratings").

One update per `game.ended`, in feed order: each seat's name is a player, ranked by the
final totals (lower is better for the Golf family, higher for Basketball:
`domain.variants.high_wins`), equal totals sharing a place. A name holding several seats
of one game is rated once, at its best seat; a game with fewer than two names is not rated.
Every number is stored rounded to 6 decimals and the next update starts from the stored
numbers, so a rebuild from zero gives the same ratings to the last digit.

The keys:
- `rating:<name>`: mu, sigma, ordinal (mu - 3 sigma: the displayed rating) and games rated.
- `leaderboard` (index): every rated name, scored by minus its ordinal, so the index's
  ascending (score, member) order is the leaderboard's: best rating first, then by name.

`game.ended` says the totals but not the names, and `keys` must name the ratings it reads
from the event alone. So `prepare_keys` (awaited before `keys`, projections/runner.py) learns each
ending game's variant and seat names: from the lobby events of the same batch or earlier
ones seen by this process, or else from the game's stream in the event store.
"""

from __future__ import annotations

from collections import OrderedDict
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field

from openskill.models import PlackettLuce

from domain.variants import high_wins
from events.schema.common import GameEnded, GameStarted
from events.schema.lobby import GameCreated, SeatClaimed, SeatReleased
from events.store.base import RecordedEvent
from projections.base import Doc, IndexAdd, Put, Write
from projections.feed import Feed
from projections.folds import FoldError, game_id

LEADERBOARD = "leaderboard"
DIGITS = 6
TRACKED = 50_000
_LOBBY_TYPES = frozenset((GameCreated, SeatClaimed, SeatReleased, GameStarted))
"""The events that tell a game's variant and seat names (exact types: every event of the
feed is tested, and a set lookup is cheaper than `isinstance` against a union)."""
"""Games whose lobby this process remembers (the oldest forgotten first: read again)."""
PAGE = 64
"""Events read at a time when a game's names come from the event store."""

MODEL = PlackettLuce()
"""The package's defaults: mu 25, sigma 25/3, beta 25/6, kappa 0.0001, tau 25/300."""


def rating_key(name: str) -> str:
    return f"rating:{name}"


@dataclass(slots=True, eq=False)
class _Lobby:
    variant: str
    names: list[str | None] = field(default_factory=list)


def _lobby(lobby: _Lobby | None, data: object) -> _Lobby | None:
    """`lobby` after one of the game's events (a new one at `game.created`)."""
    if isinstance(data, GameCreated):
        return _Lobby(data.variant, [None] * data.seats)
    if lobby is None:
        return None
    if isinstance(data, SeatClaimed | SeatReleased):
        if 0 <= data.seat < len(lobby.names):
            lobby.names[data.seat] = data.name if isinstance(data, SeatClaimed) else None
    elif isinstance(data, GameStarted):
        lobby.variant = data.variant
    return lobby


class Ratings:
    name = "ratings"
    version = 1
    types = frozenset((GameEnded,))

    def __init__(self) -> None:
        self._lobbies: OrderedDict[str, _Lobby] = OrderedDict()
        self._ending: dict[tuple[str, int], tuple[str, tuple[str | None, ...]]] = {}
        """(stream, version) of each `game.ended` of the batch prepared -> variant, names."""
        self.lookups = 0
        """Games whose names were read from the event store (their lobby not seen here)."""

    async def prepare_keys(self, batch: Sequence[RecordedEvent], feed: Feed | None = None) -> None:
        self._ending = {}
        for event in batch:
            data = event.data
            kind = type(data)
            if kind is not GameEnded and kind not in _LOBBY_TYPES:
                continue  # most events: play
            game = game_id(event)
            if game is None:
                continue
            if kind is GameEnded:
                lobby = self._lobbies.pop(game, None)
                if lobby is None:
                    self.lookups += 1
                    lobby = await _read_lobby(event, feed)
                self._ending[(event.stream_id, event.version)] = (
                    lobby.variant,
                    tuple(lobby.names),
                )
            else:
                lobby = _lobby(self._lobbies.get(game), data)
                if lobby is not None:
                    self._lobbies[game] = lobby
                    self._lobbies.move_to_end(game)
                    while len(self._lobbies) > TRACKED:
                        self._lobbies.popitem(last=False)

    def keys(self, event: RecordedEvent) -> Sequence[str]:
        if type(event.data) is not GameEnded:
            return ()
        ending = self._ending.get((event.stream_id, event.version))
        if ending is None:
            raise FoldError(f"{event.stream_id} v{event.version} was not prepared")
        return [rating_key(name) for name in dict.fromkeys(n for n in ending[1] if n)]

    def apply(self, event: RecordedEvent, docs: Mapping[str, Doc | None]) -> Sequence[Write]:
        data = event.data
        if type(data) is not GameEnded:
            return ()
        variant, names = self._ending[(event.stream_id, event.version)]
        return rate(variant, names, data.totals, docs)


def rate(
    variant: str,
    names: Sequence[str | None],
    totals: Sequence[int],
    docs: Mapping[str, Doc | None],
) -> list[Write]:
    """The writes of one game's rating update: each player's new rating and leaderboard
    place, from their ratings in `docs` (absent: a new player)."""
    sign = -1 if high_wins(variant) else 1
    best: dict[str, int] = {}
    for name, total in zip(names, totals, strict=False):
        if name is not None:
            score = sign * total
            best[name] = min(best.get(name, score), score)
    if len(best) < 2:
        return []
    players = sorted(best)
    ranks = [float(1 + sum(other < best[p] for other in best.values())) for p in players]
    before = []
    for player in players:
        doc = docs.get(rating_key(player))
        if doc is None:
            before.append((MODEL.rating(name=player), 0))
        else:
            rating = MODEL.rating(mu=doc["mu"], sigma=doc["sigma"], name=player)
            before.append((rating, doc["games"]))
    after = MODEL.rate([[rating] for rating, _ in before], ranks=ranks)
    writes: list[Write] = []
    for player, (_, games), (rating,) in zip(players, before, after, strict=True):
        mu, sigma = round(rating.mu, DIGITS), round(rating.sigma, DIGITS)
        ordinal = round(mu - 3 * sigma, DIGITS)
        doc = {"name": player, "mu": mu, "sigma": sigma, "ordinal": ordinal, "games": games + 1}
        writes.append(Put(rating_key(player), doc))
        writes.append(IndexAdd(LEADERBOARD, player, 0.0 - ordinal))
    return writes


async def _read_lobby(event: RecordedEvent, feed: Feed | None) -> _Lobby:
    """The game's variant and seat names at its start, read from its stream."""
    if feed is None:
        raise FoldError(f"{event.stream_id}: its lobby was not seen and there is no store")
    lobby: _Lobby | None = None
    version = 1
    while version < event.version:
        page = await feed.read_stream(event.stream_id, version, PAGE)
        if not page:
            break
        for recorded in page:
            lobby = _lobby(lobby, recorded.data)
            if isinstance(recorded.data, GameStarted) and lobby is not None:
                return lobby
        version = page[-1].version + 1
    if lobby is None:
        raise FoldError(f"{event.stream_id}: no game.created before v{event.version}")
    return lobby
