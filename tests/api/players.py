"""Clients that play Fairway over HTTP the way a third-party client would."""

from __future__ import annotations

import random
from dataclasses import dataclass, field
from typing import Any

import httpx


@dataclass
class Table:
    """One game as its clients see it: the game id, the creator's and every seat's token."""

    http: httpx.Client
    game_id: str
    creator: str
    tokens: list[str] = field(default_factory=list)

    def auth(self, seat: int) -> dict[str, str]:
        return {"Authorization": f"Bearer {self.tokens[seat]}"}

    def me(self, seat: int) -> dict[str, Any]:
        response = self.http.get(f"/games/{self.game_id}/me", headers=self.auth(seat))
        response.raise_for_status()
        return response.json()

    def public(self) -> dict[str, Any]:
        response = self.http.get(f"/games/{self.game_id}/view")
        response.raise_for_status()
        return response.json()

    def act(self, seat: int, action: dict[str, Any], **headers: str) -> httpx.Response:
        return self.http.post(
            f"/games/{self.game_id}/actions", json=action, headers=self.auth(seat) | headers
        )


def open_table(
    http: httpx.Client, variant: str, seats: int, options: dict[str, Any] | None = None
) -> Table:
    created = http.post(
        "/games", json={"variant": variant, "seats": seats, "options": options or {}}
    )
    created.raise_for_status()
    body = created.json()
    table = Table(http, body["game_id"], body["creator_token"])
    for seat in range(seats):
        claimed = http.post(f"/games/{table.game_id}/seats", json={"name": f"bot {seat}"})
        claimed.raise_for_status()
        table.tokens.append(claimed.json()["token"])
    started = http.post(
        f"/games/{table.game_id}/start", headers={"Authorization": f"Bearer {table.creator}"}
    )
    started.raise_for_status()
    return table


def play_step(table: Table, rng: random.Random) -> bool:
    """One action by a seat whose turn it is, chosen from its legal actions; False when over."""
    status = table.public()["status"]
    if status["phase"] == "game_over":
        return False
    seat = rng.choice(status["to_act"])
    legal = table.me(seat)["legal_actions"]
    response = table.act(seat, concrete(rng.choice(legal), rng))
    response.raise_for_status()
    return True


def concrete(listed: dict[str, Any], rng: random.Random) -> dict[str, Any]:
    """An action to post from one item of `legal_actions`: an option (Tens-shedding's
    `choose-stacks` with a `count`, `play` with a `rank`) becomes one of the actions it
    covers, drawn at random (any subset, any order); a concrete action is posted as it is."""
    if listed["type"] == "choose-stacks" and "count" in listed:
        return {"type": "choose-stacks", "cards": rng.sample(listed["cards"], listed["count"])}
    if listed["type"] == "play" and "rank" in listed:
        pool = [("hand", card) for card in listed["hand"]]
        pool += [("stacks", stack) for stack in listed["stacks"]]
        chosen = rng.sample(pool, rng.randint(1, len(pool)))
        return {
            "type": "play",
            "hand": [card for where, card in chosen if where == "hand"],
            "stacks": [stack for where, stack in chosen if where == "stacks"],
        }
    return listed
