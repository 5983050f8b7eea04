"""The public halves of fair play: a seat's own seed for the coming deals, and the key
that signs receipts."""

from __future__ import annotations

from typing import Annotated, Any

from litestar import Controller, Request, Response, get, put
from litestar.di import NamedDependency
from litestar.params import Parameter

from domain.shuffle import valid_seat_seed
from service.audit.keys import ReceiptKeys
from service.contract import schemas as s
from service.contract.problems import ApiError
from service.contract.receipts import (
    ALGORITHM,
    ReceiptKeyInfo,
    RegisteredReceiptKey,
    RetiredReceiptKey,
    b64url,
    from_b64url,
    key_id,
)
from service.http import docs
from service.http.params import (
    SEAT_TOKEN,
    GameId,
    IdempotencyKey,
    answer,
    required_token,
)
from service.play.games import GameService


class SeatSeedController(Controller):
    path = "/games"
    tags = ["games"]

    @put(
        "/{game_id:str}/seats/{seat:int}/seed",
        operation_id="setSeatSeed",
        summary="Set the seat's own seed for the hands dealt from now on",
        security=SEAT_TOKEN,
        status_code=200,
        responses=docs.SEED,
        response_headers=docs.ETAG,
    )
    async def set_seed(
        self,
        game_id: GameId,
        seat: Annotated[int, Parameter(ge=0, le=9, description="Your seat")],
        data: Annotated[s.SetSeatSeed, docs.SET_SEED],
        request: Request[Any, Any, Any],
        games: NamedDependency[GameService],
        idempotency_key: IdempotencyKey = None,
    ) -> Response[s.SeatSeedRecorded]:
        """Any string of 1..128 printable characters; in the lobby or during play, never
        after the game is over. It counts from the next deal on; seat seeds are public. A
        seat that sets none contributes its name (docs/SHUFFLE.md)."""
        if not valid_seat_seed(data.seed):
            raise ApiError(
                422,
                "invalid_request",
                "a seat seed is printable characters: no control, format, private-use or "
                "unassigned character, and no separator but the space",
                errors=[{"message": "not printable", "key": "seed", "source": "body"}],
            )
        outcome = await games.set_seed(
            game_id, required_token(request), seat, data.seed, idempotency_key
        )
        version = outcome.last_version
        event = outcome.record.entries[version - 1].event
        body = s.SeatSeedRecorded(
            game_id, seat, event.seed, version, games.receipt(outcome.record, version)
        )
        return answer(body, version)


class ReceiptKeyController(Controller):
    path = "/.well-known"
    tags = ["games"]

    @get(
        "/fairway-receipt-key",
        operation_id="getReceiptKey",
        summary="The public keys that sign receipts",
        responses=docs.problems(429, 503),
    )
    async def receipt_key(self, keyring: NamedDependency[ReceiptKeys]) -> ReceiptKeyInfo:
        """This instance's signing key (`key_id`, `public_key`) and the retired keys it is
        configured with; `keys`: every key the installation's store has registered, so that
        a receipt signed by any instance verifies with one of them."""
        key = keyring.signing
        retired = [RetiredReceiptKey(key_id(from_b64url(text)), text) for text in keyring.retired]
        keys = [
            RegisteredReceiptKey(k.key_id, b64url(k.public_key), k.first_seen.isoformat())
            for k in await keyring.registered()
        ]
        return ReceiptKeyInfo(ALGORITHM, key.key_id, b64url(key.public_key), retired, keys)
