"""Tournaments for the tests: play a table's game to its end with greedy bots, each seat
acting with its player's token through the service, and read what a round stored."""

from __future__ import annotations

import random
from typing import Any

import httpx
import msgspec

from domain.tournament.decide import Create
from domain.variants import bot, decider_for
from events.schema.common import GameOptions
from service.contract.schemas import LegalAction, View
from service.play.games import GameService


def tournament_spec(**changes: object) -> Create:
    """A tournament's creation as the tests ask for it: duplicate Swiss Golf of one hand a
    game, tables of four, two rounds, unless `changes` say otherwise."""
    fields: dict[str, object] = {
        "name": "Spring open",
        "variant": "golf",
        "options": GameOptions(hands=1),
        "table_size": 4,
        "rounds": 2,
        "seating": "swiss",
        "duplicate": True,
        "organiser_hash": "",
        "seed_anchor": "",
        "seed_secret": "",
    }
    fields.update(changes)
    return Create(**fields)  # type: ignore[arg-type]


async def play_out(games: GameService, game_id: str, tokens: dict[str, str], seed: int) -> None:
    """Play the game to its end: at each step a seat to act takes the greedy bot's choice
    on its own view, sent with its player's token (the one that acts in all their games)."""
    rng = random.Random(seed)
    record = await games.load(game_id)
    decider = record.decider
    assert decider is not None
    greedy = bot("greedy", decider.name)
    while not record.finished:
        status = decider.status(record.state)
        seat = status.to_act[rng.randrange(len(status.to_act))]
        legal = decider.legal_actions(record.state, seat)
        choice = greedy.choose(decider.view(record.state, seat), legal, rng)
        name = record.lobby.names[seat]
        assert name is not None
        outcome = await games.act(game_id, tokens[name], decider.pick(choice, rng))
        record = outcome.record


def play_over_http(http: httpx.Client, game_id: str, tokens: dict[str, str], seed: int) -> None:
    """The same over HTTP: each seat reads its view and legal actions with its player's
    token (GET /games/{id}/me) and posts the greedy bot's choice."""
    rng = random.Random(seed)
    summary = http.get(f"/games/{game_id}").json()
    variant = summary["variant"]
    names = [seat["name"] for seat in summary["seats"]]
    decider = decider_for(variant)
    greedy = bot("greedy", variant)
    # Whose turn it is, as a seat reads it: a spectator of a duplicate round is shown no
    # hand before every table has played it (service/tournaments/duplicate.py).
    first = {"Authorization": f"Bearer {tokens[names[0]]}"}
    while True:
        status = http.get(f"/games/{game_id}/me", headers=first).json()["status"]
        if status["phase"] == "game_over":
            return
        seat = rng.choice(status["to_act"])
        auth = {"Authorization": f"Bearer {tokens[names[seat]]}"}
        me = http.get(f"/games/{game_id}/me", headers=auth).json()
        view, legal = decode_view(decider, me)
        action = decider.pick(greedy.choose(view, legal, rng), rng)
        response = http.post(
            f"/games/{game_id}/actions", json=msgspec.to_builtins(action), headers=auth
        )
        assert response.status_code == 200, response.text


def decode_view(decider: Any, me: dict[str, Any]) -> tuple[Any, list[Any]]:
    """A seat's view and legal actions from their JSON, as the domain's own types."""
    view = msgspec.convert(me["view"], View)
    legal = msgspec.convert(me["legal_actions"], list[LegalAction])  # type: ignore[valid-type]
    return view, legal
