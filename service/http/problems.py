"""The one error mapping: every failure becomes RFC 9457 problem details with a stable code
(the codes and the body: service/contract/problems.py)."""

from __future__ import annotations

from typing import Any

import msgspec
from litestar import Request, Response
from litestar.exceptions import HTTPException, ValidationException
from litestar.types import ExceptionHandlersMap

from domain.errors import RuleViolation
from events.store import (
    ConcurrencyError,
    EventIdConflict,
    InvalidEvent,
    InvalidStreamId,
    StoreError,
    StoreUnavailable,
    UnreadableEvent,
)
from projections.base import InvalidCursor, ProjectionsUnavailable
from service.contract.problems import ALL_CODES, PROBLEM_JSON, ApiError, FieldError, Problem
from service.ops.logging import log

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
    detail = str(exc.detail)
    if exc.status_code == 413:  # name the limit: it differs by route
        limit = request.route_handler.resolve_request_max_body_size()
        detail = f"the body is larger than the {limit} bytes this route takes"
    return problem_response(request, exc.status_code, code, detail, headers=dict(exc.headers or {}))


def _store(request: Request[Any, Any, Any], exc: StoreError) -> Response[Problem]:
    if isinstance(exc, ConcurrencyError | EventIdConflict):
        return problem_response(request, 409, "conflict", str(exc))
    if isinstance(exc, UnreadableEvent):
        return _unreadable(request, exc)
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


NEWER_RETRY_AFTER = 30
"""Seconds a client waits for a stream a newer release wrote: a rolling deploy's pace."""


def _unreadable(request: Request[Any, Any, Any], exc: UnreadableEvent) -> Response[Problem]:
    """A server-side fault of one stream (the store has reported it to the operator)."""
    found = exc.unreadable
    at = f"stream {exc.stream_id} version {exc.version} ({found.type} v{found.schema_version})"
    if found.newer:
        return problem_response(
            request,
            503,
            "event_from_newer_release",
            f"{at} was written by a newer release; it is served once this instance runs it",
            headers={"Retry-After": str(NEWER_RETRY_AFTER)},
        )
    detail = f"{at} cannot be decoded; it is not served until an operator has looked at it"
    return problem_response(request, 500, "event_unreadable", detail)


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


EXCEPTION_HANDLERS: ExceptionHandlersMap = {
    ApiError: _api_error,
    RuleViolation: _rule_violation,
    ValidationException: _validation,
    HTTPException: _http,
    StoreError: _store,
    ProjectionsUnavailable: _projections,
    InvalidCursor: _cursor,
    Exception: _unexpected,
}
