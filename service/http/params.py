"""What the game resources read from a request and how they answer: the game id in the
path, the Idempotency-Key, If-None-Match and If-Match headers, the seat token (a bearer
token), the spectator delay and duplicate gate they are given, and the answer with the
game's version as its ETag (304 when the client's copy is current)."""

from __future__ import annotations

from typing import Annotated, Any

from litestar import Request, Response
from litestar.di import NamedDependency
from litestar.params import HeaderParameter, Parameter

from service.contract.problems import ApiError
from service.tournaments.duplicate import DuplicateGate

SEAT_TOKEN: list[dict[str, list[str]]] = [{"seatToken": []}]
# `(?![\s\S])`, the end of the text: `$` would also let a final newline through.
GameId = Annotated[str, Parameter(pattern=r"^[0-9a-f]{16}(?![\s\S])", description="The game's id")]
IdempotencyKey = Annotated[
    str | None,
    HeaderParameter(
        name="Idempotency-Key",
        required=False,
        max_length=128,
        pattern=r"^[\x21-\x7e]+$",
        description="Makes the action safe to retry: the same key and body give the same "
        "answer and one set of events; the same key with another body is rejected (422).",
    ),
]
LobbyKey = Annotated[
    str | None,
    HeaderParameter(
        name="Idempotency-Key",
        required=False,
        min_length=16,
        max_length=128,
        pattern=r"^[\x21-\x7e]+$",
        description="Makes the request safe to retry: a retry with the same key and body "
        "returns the first answer, secret token included. The key derives that token, so "
        "keep it secret and unguessable (a random UUID; at least 16 characters).",
    ),
]
SpectatorDelay = NamedDependency[int]
"""FAIRWAY_SPECTATOR_DELAY: seat actions spectators are held back (service/live/spectators.py)."""
Gate = NamedDependency[DuplicateGate]
"""How far a reader not seated in a duplicate-deal game may see it
(service/tournaments/duplicate.py)."""
IfNoneMatch = Annotated[
    str | None,
    HeaderParameter(
        name="If-None-Match",
        required=False,
        max_length=200,
        description='The ETag of the copy you hold (`"12"`): 304 with no body while the game '
        "is still at that version.",
    ),
]
IfMatch = Annotated[
    str | None,
    HeaderParameter(
        name="If-Match",
        required=False,
        max_length=40,
        description='The game version the action was decided on (`"12"`); a stale one gives 409.',
    ),
]


def bearer(request: Request[Any, Any, Any]) -> str | None:
    return bearer_of(request.headers.get("authorization"))


def required_token(request: Request[Any, Any, Any]) -> str:
    return required_bearer(request.headers.get("authorization"))


def bearer_of(authorization: str | None) -> str | None:
    """The token in an Authorization header's value, None without one."""
    if not authorization:
        return None
    scheme, _, token = authorization.partition(" ")
    if scheme.lower() != "bearer" or not token.strip():
        raise ApiError(401, "invalid_token", "use `Authorization: Bearer <token>`")
    return token.strip()


def required_bearer(authorization: str | None) -> str:
    token = bearer_of(authorization)
    if token is None:
        raise ApiError(401, "token_required", "send the token as `Authorization: Bearer <token>`")
    return token


def parse_if_match(value: str | None) -> int | None:
    if value is None:
        return None
    text = value.strip().removeprefix("W/").strip('"')
    if not text.isdigit():
        raise ApiError(422, "invalid_request", f"If-Match must be a game version, not {value!r}")
    return int(text)


def answer(
    body: Any,
    version: int,
    if_none_match: str | None = None,
    *,
    status_code: int = 200,
    location: str | None = None,
) -> Response[Any]:
    """A game response: its version as the ETag, and 304 without a body when the client's
    copy (`If-None-Match`) is of that version already."""
    tag = f'"{version}"'
    headers = {"ETag": tag}
    if if_none_match is not None:
        held = {t.strip().removeprefix("W/") for t in if_none_match.split(",")}
        if tag in held or "*" in held:
            return Response(None, status_code=304, headers=headers)
    if location is not None:
        headers["Location"] = location
    return Response(body, status_code=status_code, headers=headers)
