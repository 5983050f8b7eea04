"""The one error mapping: every failure becomes RFC 9457 problem details with a stable code."""

from __future__ import annotations

from typing import Any, Literal

import msgspec
from litestar import Request, Response
from litestar.exceptions import HTTPException, ValidationException

from domain.errors import CODES as RULE_CODES
from domain.errors import RuleViolation
from events.store import (
    ConcurrencyError,
    EventIdConflict,
    InvalidEvent,
    InvalidStreamId,
    StoreError,
    StoreUnavailable,
)
from projections.base import InvalidCursor, ProjectionsUnavailable
from service.logging import log

PROBLEM_JSON = "application/problem+json"

# Rule violations about *when* (order, turn, phase) conflict with the game's state: 409.
# The rest are about *what* was asked for: 422.
_CONFLICTS = {
    "game_not_started",
    "game_over",
    "hand_over",
    "not_your_turn",
    "wrong_phase",
    "setup_incomplete",
    "already_done",
    "name_taken",
    "registration_closed",
    "player_withdrawn",
    "round_in_play",
    "tournament_over",
    "not_enough_players",
    "no_round_in_play",
}
# Rule violations about a name that does not exist: 404.
_MISSING = {"unknown_player"}

# Codes the service adds to the domain's (domain/errors.py); documented in docs/API.md.
SERVICE_CODES: dict[str, str] = {
    "malformed_request": "the request is not well-formed HTTP, or its body not JSON",
    "invalid_request": "the body or a parameter has a wrong type, value or an unknown field",
    "body_too_large": "the request body is larger than the service accepts",
    "body_too_deep": "the body nests arrays or objects deeper than the service accepts",
    "unsupported_media_type": "the body must be JSON (Content-Type: application/json)",
    "token_required": "this operation needs a seat or creator token (Authorization: Bearer)",
    "invalid_token": "the token is not valid for this game",
    "not_creator": "only the game's creator may do this",
    "game_not_found": "no game has that id",
    "variant_not_found": "no variant has that name",
    "not_found": "no such resource",
    "method_not_allowed": "the resource does not support that method",
    "seat_taken": "that seat has already been claimed",
    "seat_free": "that seat is not claimed",
    "no_free_seat": "every seat has been claimed",
    "seats_unclaimed": "every seat must be claimed before the game starts",
    "game_already_started": "the game has started; the lobby is closed",
    "stale_version": "If-Match names a version that is no longer the game's current one",
    "idempotency_key_reused": "the Idempotency-Key was used before with a different request",
    "conflict": "the game changed concurrently too often; retry",
    "rate_limited": "too many requests; wait for Retry-After seconds",
    "too_many_connections": "the server holds all the connections it takes; retry shortly",
    "unavailable": "the event store is unavailable",
    "history_corrupt": "the game's stored history fails verification; an operator must look",
    "internal_error": "an unexpected error; it has been logged",
    "projections_unavailable": "the read models are unavailable (Redis, or being rebuilt)",
    "player_not_found": "no game has started with a seat of that name",
    "hand_not_found": "the game has no such hand",
    "hand_in_play": "the hand is still in play; it is shown once it is over",
    "game_in_play": "the game is not over; only a finished game is exported",
    "not_your_seat": "the token holds another seat than the one named",
    "too_many_seeds": "the seat has set its seed as often as it may before the next deal",
    "seat_resigned": "the seat has resigned (or its player withdrew): the service plays it",
    "duplicate_deals": "a duplicate round's seat seeds are the tournament's: no seat sets its own",
    "tournament_not_found": "no tournament has that id",
    "not_organiser": "only the tournament's organiser may do this",
    "not_admin": "creating a tournament needs the admin key",
    "not_this_player": "the token is another player's",
    "tournament_in_play": "the tournament has not ended; it is audited once it has",
    "deals_to_come": "a table of the game's duplicate round is still in play: its deals are "
    "to come there, so they are shown once every table has ended",
}
ALL_CODES = {**RULE_CODES, **SERVICE_CODES}


ProblemCode = Literal[tuple(ALL_CODES)]  # type: ignore[valid-type]
"""Every code a problem may carry; a client can switch on it (docs/API.md lists them)."""


class FieldError(msgspec.Struct, omit_defaults=True):
    """One field that did not fit: what was wrong, where (`key`, a dotted path) and in which
    part of the request (`body`, `query`, `path`, `header`)."""

    message: str
    key: str = ""
    source: str = ""


class Problem(msgspec.Struct, omit_defaults=True):
    """RFC 9457 problem details, with Fairway's stable machine-readable `code`."""

    type: str
    """`urn:fairway:problem:<code>`."""
    title: str
    status: int
    code: ProblemCode
    detail: str
    """What was wrong with this request, in words."""
    instance: str | None = None
    errors: list[FieldError] | None = None


class ApiError(Exception):
    def __init__(
        self,
        status: int,
        code: str,
        detail: str,
        headers: dict[str, str] | None = None,
        errors: list[dict[str, Any]] | None = None,
    ) -> None:
        if code not in ALL_CODES:
            raise ValueError(f"unregistered problem code {code!r}")
        super().__init__(detail)
        self.status, self.code, self.detail, self.headers = status, code, detail, headers or {}
        self.errors = errors


def problem_response(
    request: Request[Any, Any, Any] | None,
    status: int,
    code: str,
    detail: str,
    headers: dict[str, str] | None = None,
    errors: list[dict[str, Any]] | None = None,
) -> Response[Problem]:
    body = Problem(
        type=f"urn:fairway:problem:{code}",
        title=ALL_CODES[code],
        status=status,
        code=code,
        detail=detail,
        instance=request.url.path if request is not None else None,
        errors=None if errors is None else msgspec.convert(errors, list[FieldError]),
    )
    return Response(body, status_code=status, media_type=PROBLEM_JSON, headers=headers)


def _api_error(request: Request[Any, Any, Any], exc: ApiError) -> Response[Problem]:
    return problem_response(request, exc.status, exc.code, exc.detail, exc.headers, exc.errors)


def _rule_violation(request: Request[Any, Any, Any], exc: RuleViolation) -> Response[Problem]:
    status = 409 if exc.code in _CONFLICTS else 404 if exc.code in _MISSING else 422
    return problem_response(request, status, exc.code, exc.message)


def _validation(request: Request[Any, Any, Any], exc: ValidationException) -> Response[Problem]:
    """A body that parsed but does not fit the schema is 422; a bad path or query value 400."""
    detail = str(exc.detail)
    extra = exc.extra if isinstance(exc.extra, list) else None
    if "malformed" in (detail + str(extra or "")).lower():
        return problem_response(request, 400, "malformed_request", detail, errors=extra)
    in_body = any(isinstance(e, dict) and e.get("source") == "body" for e in extra or ())
    return problem_response(
        request, 422 if in_body else 400, "invalid_request", detail, errors=extra
    )


_HTTP_CODES = {
    400: "malformed_request",
    401: "token_required",
    403: "not_creator",
    404: "not_found",
    405: "method_not_allowed",
    413: "body_too_large",
    415: "unsupported_media_type",
    429: "rate_limited",
}


def _http(request: Request[Any, Any, Any], exc: HTTPException) -> Response[Problem]:
    if isinstance(exc, ValidationException):
        return _validation(request, exc)
    code = _HTTP_CODES.get(exc.status_code)
    if code is None:
        return _unexpected(request, exc)
    return problem_response(
        request, exc.status_code, code, str(exc.detail), headers=dict(exc.headers or {})
    )


def _store(request: Request[Any, Any, Any], exc: StoreError) -> Response[Problem]:
    if isinstance(exc, ConcurrencyError | EventIdConflict):
        return problem_response(request, 409, "conflict", str(exc))
    if isinstance(exc, InvalidEvent | InvalidStreamId):
        return problem_response(request, 422, "invalid_request", str(exc))
    if isinstance(exc, StoreUnavailable):
        log.error("store_unavailable", error=str(exc))
        return problem_response(
            request,
            503,
            "unavailable",
            "the event store is unavailable",
            headers={"Retry-After": "1"},
        )
    return _unexpected(request, exc)


def _unexpected(request: Request[Any, Any, Any], exc: Exception) -> Response[Problem]:
    log.exception("unhandled_error", path=request.url.path, error=repr(exc))
    return problem_response(request, 500, "internal_error", "an unexpected error occurred")


def _projections(request: Request[Any, Any, Any], exc: ProjectionsUnavailable) -> Response[Problem]:
    log.warning("projections_unavailable", error=str(exc))
    return problem_response(
        request,
        503,
        "projections_unavailable",
        "the read models are unavailable; play goes on, retry shortly",
        headers={"Retry-After": "1"},
    )


def _cursor(request: Request[Any, Any, Any], exc: InvalidCursor) -> Response[Problem]:
    errors = [{"message": str(exc), "key": "cursor", "source": "query"}]
    return problem_response(request, 400, "invalid_request", str(exc), errors=errors)


EXCEPTION_HANDLERS: dict[type[Exception], Any] = {
    ApiError: _api_error,
    RuleViolation: _rule_violation,
    ValidationException: _validation,
    HTTPException: _http,
    StoreError: _store,
    ProjectionsUnavailable: _projections,
    InvalidCursor: _cursor,
    Exception: _unexpected,
}
