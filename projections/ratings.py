"""Player ratings across every finished game, tournament or casual: OpenSkill's
Plackett-Luce model (Weng and Lin's Bayesian approximation for multiplayer rankings,
docs/TOURNAMENTS.md, "Ratings").

One update per finished game, in feed order: each seat's name is a player, ranked by the
final totals (lower is better for the Golf family, higher for Basketball:
`domain.variants.high_wins`), equal totals sharing a place. A name holding several seats
of one game is rated once, at its best seat; a game with fewer than two names is not rated.
Every number is stored rounded to 6 decimals and the next update starts from the stored
numbers, so a rebuild from zero gives the same ratings to the last digit.

A game is rated at its `game.ended`, except a duplicate round's (its `game.created` names
`peers`): every table of its round is dealt the same cards, so its players' new ratings
would tell the tables still playing who did well on the deals to come. It is rated when the
tournament's `round.closed` lists it, the round's games in table order (as the players read
model counts it, projections/players.py).

The keys:
- `game:<game_id>`: a game not rated yet, as the rating needs it: its variant, the name in
  each seat, each bot seat's level (`bots`, once a bot took a seat), `held` for a duplicate
  round's, and once a held game has ended its `totals`. Written at the game's lobby events,
  deleted once the game is rated.
- `rating:<name>`: mu, sigma, ordinal (mu - 3 sigma: the displayed rating), games rated,
  and `bot`: the level of the last bot that played a rated game under the name (its
  `seat.claimed` named a bot), once one has; a bot's seat in a game not yet rated marks
  nothing. The mark stays: a name a bot has played is a bot's.
- `leaderboard` (index): every rated name, scored by minus its ordinal, so the index's
  ascending (score, member) order is the leaderboard's: best rating first, then by name.
- `leaderboard:people` (index): the same without the names marked as bots.

`game.ended` says the totals but not the names: the game's document does, so the ratings it
updates are named by `more_keys` (projections/runner.py) from that document.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from openskill.models import PlackettLuce

from domain.variants import high_wins
from events.schema.common import GameEnded, GameStarted
from events.schema.lobby import GameCreated, SeatClaimed, SeatReleased
from events.schema.tournament import RoundClosed
from events.store.base import RecordedEvent
from projections.base import Delete, Doc, IndexAdd, IndexRemove, Put, Write
from projections.folds import GAME_PREFIX, game_id

LEADERBOARD = "leaderboard"
PEOPLE = "leaderboard:people"
"""The leaderboard without bots."""
DIGITS = 6
_GAME_TYPES = frozenset((GameCreated, SeatClaimed, SeatReleased, GameStarted, GameEnded))
"""The game events read (exact types: events are never subclassed)."""

MODEL = PlackettLuce()
"""The package's defaults: mu 25, sigma 25/3, beta 25/6, kappa 0.0001, tau 25/300."""


def rating_key(name: str) -> str:
    return f"rating:{name}"


def game_key(game: str) -> str:
    return f"game:{game}"


class Ratings:
    name = "ratings"
    version = 3
    """2: the game's names kept in its document (no longer in the projector's memory); a
    duplicate round's game rated at its round's close. 3: bots marked, and the
    leaderboard without them."""
    types = _GAME_TYPES | {RoundClosed}

    def keys(self, event: RecordedEvent) -> Sequence[str]:
        kind = type(event.data)
        if kind is RoundClosed:
            return tuple(game_key(result.game_id) for result in event.data.results)
        stream = event.stream_id  # `game:<game_id>`, which is `game_key(game_id)`
        return (stream,) if kind in _GAME_TYPES and stream.startswith(GAME_PREFIX) else ()

    def more_keys(self, event: RecordedEvent, docs: Mapping[str, Doc | None]) -> Sequence[str]:
        """The ratings of the players of each game this event rates."""
        data = event.data
        if isinstance(data, GameEnded):
            doc = docs.get(event.stream_id)
            games = [doc] if doc is not None and not doc.get("held") else []
        elif isinstance(data, RoundClosed):
            games = [d for d in docs.values() if d is not None and "totals" in d]
        else:
            return ()
        return [rating_key(n) for n in dict.fromkeys(n for d in games for n in d["names"] if n)]

    def apply(self, event: RecordedEvent, docs: Mapping[str, Doc | None]) -> Sequence[Write]:
        data = event.data
        if isinstance(data, RoundClosed):
            return _round_closed(data, docs)
        game = game_id(event)
        if game is None:
            return ()
        key = game_key(game)
        if isinstance(data, GameCreated):
            fresh: Doc = {"variant": data.variant, "names": [None] * data.seats}
            if data.peers:
                fresh["held"] = True
            return (Put(key, fresh),)
        doc = docs.get(key)
        if doc is None:
            return ()  # rated already, or a stream that did not begin with game.created
        if isinstance(data, SeatClaimed | SeatReleased):
            return (Put(key, _seated(doc, data)),)
        if isinstance(data, GameStarted):
            return (Put(key, doc | {"variant": data.variant}),)
        assert isinstance(data, GameEnded)
        if doc.get("held"):
            return (Put(key, doc | {"totals": list(data.totals)}),)  # rated at its round's close
        return [
            Delete(key),
            *rate(doc["variant"], doc["names"], data.totals, docs, doc.get("bots")),
        ]


def _seated(doc: Doc, data: SeatClaimed | SeatReleased) -> Doc:
    """The game's document with the seat taken (by a person or a bot) or given up."""
    names = list(doc["names"])
    bots = list(doc.get("bots") or [""] * len(names))
    if 0 <= data.seat < len(names):
        names[data.seat] = data.name if isinstance(data, SeatClaimed) else None
        bots[data.seat] = data.bot if isinstance(data, SeatClaimed) else ""
    return doc | {"names": names} | ({"bots": bots} if any(bots) else {})


def _round_closed(data: RoundClosed, docs: Mapping[str, Doc | None]) -> list[Write]:
    """Each held game of the round that has ended, rated in table order: each update starts
    from the ratings the one before it left."""
    writes: list[Write] = []
    ratings = dict(docs)
    for result in data.results:
        key = game_key(result.game_id)
        doc = docs.get(key)
        if doc is None or "totals" not in doc:
            continue  # rated at its own end (no duplicate deals), or never seen here
        rated = rate(doc["variant"], doc["names"], doc["totals"], ratings, doc.get("bots"))
        ratings.update({w.key: w.doc for w in rated if isinstance(w, Put)})
        writes += [Delete(key), *rated]
    return writes


def rate(
    variant: str,
    names: Sequence[str | None],
    totals: Sequence[int],
    docs: Mapping[str, Doc | None],
    bots: Sequence[str] | None = None,
) -> list[Write]:
    """The writes of one game's rating update: each player's new rating and leaderboard
    places, from their ratings in `docs` (absent: a new player). `bots`: each seat's bot
    level ("" for a person's seat; None: no bot at the table)."""
    sign = -1 if high_wins(variant) else 1
    best: dict[str, int] = {}
    played_by: dict[str, str] = {}
    for seat, (name, total) in enumerate(zip(names, totals, strict=False)):
        if name is not None:
            score = sign * total
            best[name] = min(best.get(name, score), score)
            if bots and bots[seat]:
                played_by[name] = bots[seat]
    if len(best) < 2:
        return []
    players = sorted(best)
    ranks = [float(1 + sum(other < best[p] for other in best.values())) for p in players]
    before = []
    for player in players:
        doc = docs.get(rating_key(player))
        if doc is None:
            before.append((MODEL.rating(name=player), 0, ""))
        else:
            rating = MODEL.rating(mu=doc["mu"], sigma=doc["sigma"], name=player)
            before.append((rating, doc["games"], doc.get("bot", "")))
    after = MODEL.rate([[rating] for rating, _, _ in before], ranks=ranks)
    writes: list[Write] = []
    for player, (_, games, was_bot), (rating,) in zip(players, before, after, strict=True):
        mu, sigma = round(rating.mu, DIGITS), round(rating.sigma, DIGITS)
        ordinal = round(mu - 3 * sigma, DIGITS)
        doc = {"name": player, "mu": mu, "sigma": sigma, "ordinal": ordinal, "games": games + 1}
        bot = played_by.get(player, was_bot)
        if bot:
            doc["bot"] = bot
        writes.append(Put(rating_key(player), doc))
        writes.append(IndexAdd(LEADERBOARD, player, 0.0 - ordinal))
        if not bot:
            writes.append(IndexAdd(PEOPLE, player, 0.0 - ordinal))
        elif not was_bot and games:  # a rated person's name that a bot now plays
            writes.append(IndexRemove(PEOPLE, player))
    return writes
