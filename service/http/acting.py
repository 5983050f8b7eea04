"""POST /games/{id}/actions: what the route does with what it has read, in one place for the
controller (service/http/controllers/games.py) and the lean path (service/http/lean.py)."""

from __future__ import annotations

import hashlib

import msgspec

from events.schema.grid import GridAction
from events.schema.shedding import SheddingAction
from service.contract import schemas as s
from service.http.chain import feed
from service.http.params import parse_if_match, required_bearer
from service.play.games import GameService

Action = GridAction | SheddingAction


async def take_action(
    games: GameService,
    game_id: str,
    data: Action,
    authorization: str | None,
    idempotency_key: str | None,
    if_match: str | None,
) -> tuple[s.ActionResult, int]:
    """The action's answer and the game's version after it: the action's events and the
    acting seat's view and legal actions; a retry with the same `Idempotency-Key` gets the
    first answer exactly. Raises what the route answers as problem details."""
    token = required_bearer(authorization)
    outcome = await games.act(
        game_id,
        token,
        data,
        idempotency_key=idempotency_key,
        request_hash="" if idempotency_key is None else _request_hash(data),
        if_match=parse_if_match(if_match),
    )
    record, last, seat = outcome.record, outcome.last_version, outcome.actor.seat
    assert seat is not None
    assert record.decider is not None
    decider, state = record.decider, record.state_at(last)
    body = s.ActionResult(
        game_id=record.game_id,
        seat=seat,
        version=last,
        events=feed(record, seat, outcome.first_version, last, last),
        status=decider.status(state),
        view=decider.view(state, seat),
        legal_actions=list(decider.legal_actions(state, seat)),
        receipt=games.receipt(record, last),
    )
    return body, last


def _request_hash(data: Action) -> str:
    """What a retry with the same `Idempotency-Key` must repeat (only a keyed action is
    compared with an earlier one, so only its hash is worked out)."""
    return hashlib.sha256(msgspec.json.encode(data)).hexdigest()
