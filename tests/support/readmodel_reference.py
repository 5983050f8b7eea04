"""The read models recomputed straight from each game's whole stream, the simple way: what
the projections must agree with, however the feed was batched, interleaved or restarted.

No fold cache, no incremental documents: each game's events are read in one go and folded
with `domain.variants.fold`; players are counted game by game.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import msgspec

from domain.variants import fold
from events.schema import lobby
from events.schema.common import GameEnded, GameStarted, HandEnded
from events.schema.lobby import GameCreated, SeatClaimed, SeatReleased
from events.schema.tournament import RoundClosed
from events.store.base import RecordedEvent
from tests.support.dict_projector import DictModel
from tests.support.feeds import streams_of


def _names(events: list[Any]) -> list[str | None]:
    created = events[0]
    assert isinstance(created, GameCreated)
    names: list[str | None] = [None] * created.seats
    for event in events:
        if isinstance(event, SeatClaimed):
            names[event.seat] = event.name
        elif isinstance(event, SeatReleased):
            names[event.seat] = None
    return names


def _bots(events: list[Any]) -> list[str | None]:
    bots: list[str | None] = [None] * events[0].seats
    for event in events:
        if isinstance(event, SeatClaimed | SeatReleased):
            bots[event.seat] = (event.bot or None) if isinstance(event, SeatClaimed) else None
    return bots


def scoreboards(feed: list[RecordedEvent]) -> dict[str, Any]:
    docs: dict[str, Any] = {}
    for stream_id, recorded in streams_of(feed).items():
        game = stream_id.removeprefix("game:")
        events = [r.data for r in recorded]
        play = [e for e in events if not isinstance(e, lobby.EVENTS)]
        status = None
        if play:
            decider, state = fold(play)
            status = msgspec.json.decode(msgspec.json.encode(decider.status(state)))
        docs[f"game:{game}"] = {
            "game_id": game,
            "variant": events[0].variant,
            "version": len(events),
            "seats": _names(events),
            "status": status,
        }
        if any(isinstance(e, SeatClaimed) and e.bot for e in events):
            docs[f"game:{game}"]["bots"] = _bots(events)
        hands = [
            {"hand": e.hand, "reason": e.reason, "scores": list(e.scores), "totals": list(e.totals)}
            for e in events
            if isinstance(e, HandEnded)
        ]
        if hands:
            docs[f"hands:{game}"] = {"hands": hands}
    return docs


def places(totals: list[int], winners: list[int], high_wins: bool) -> list[int]:
    ranked = sorted(totals, reverse=high_wins)
    return [ranked.index(total) + 1 for total in totals]


def players(feed: list[RecordedEvent]) -> DictModel:
    """Documents, counters and indexes as the players projection keeps them. A duplicate
    round's game (`peers`) counts as over only once a `round.closed` in the feed lists it."""
    model = DictModel()
    closed = {
        result.game_id
        for event in feed
        if isinstance(event.data, RoundClosed)
        for result in event.data.results
    }
    for stream_id, recorded in streams_of(feed).items():
        if not stream_id.startswith("game:"):
            continue
        game = stream_id.removeprefix("game:")
        events = [r.data for r in recorded]
        names = _names(events)
        doc: dict[str, Any] = {"variant": events[0].variant, "names": names}
        held = bool(events[0].peers)
        if held:
            doc["held"] = True
        start = next((r for r in recorded if isinstance(r.data, GameStarted)), None)
        end = next((e for e in events if isinstance(e, GameEnded)), None)
        if held and game not in closed:
            end = None
        if start is not None:
            doc["started"] = True
            for seat, name in enumerate(names):
                if name is not None:
                    counters = model.counters.setdefault(f"player:{name}", {})
                    counters["games"] = counters.get("games", 0) + 1
                    index = model.indexes.setdefault(f"games:{name}", {})
                    index[f"{game}:{seat}"] = start.global_position
        if end is not None:
            seat_places = places(
                list(end.totals), list(end.winners), doc["variant"] == "basketball"
            )
            doc |= {
                "finished": True,
                "totals": list(end.totals),
                "winners": list(end.winners),
                "places": seat_places,
            }
            for seat, name in enumerate(names):
                if name is None:
                    continue
                counters = model.counters.setdefault(f"player:{name}", {})
                won = seat in end.winners
                for field, amount in (
                    ("finished", 1),
                    ("wins", int(won)),
                    ("points", end.totals[seat]),
                    (f"place:{seat_places[seat]}", 1),
                ):
                    counters[field] = counters.get(field, 0) + amount
        model.docs[f"game:{game}"] = doc
    return model


def replays(
    feed: list[RecordedEvent], replay_hand: Callable[[str, list[tuple[int, Any]], int], Any]
) -> dict[tuple[str, int], Any]:
    """Every finished hand, by (game id, hand), replayed from the game's whole stream as the
    feed holds it."""
    out: dict[tuple[str, int], Any] = {}
    for stream_id, recorded in streams_of(feed).items():
        game = stream_id.removeprefix("game:")
        events = [(r.version, r.data) for r in recorded]
        for _, event in events:
            if isinstance(event, HandEnded):
                out[(game, event.hand)] = replay_hand(game, events, event.hand)
    return out
