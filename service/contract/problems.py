"""Problem details (RFC 9457): the stable codes a client may meet, the body they come in, and
ApiError, which every layer raises to answer with one (service/http/problems.py maps it)."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Literal

import msgspec

from domain.errors import CODES as RULE_CODES

PROBLEM_JSON = "application/problem+json"


# Codes the service adds to the domain's (domain/errors.py); documented in docs/API.md.
SERVICE_CODES: dict[str, str] = {
    "malformed_request": "the request is not well-formed HTTP, or its body not JSON",
    "invalid_request": "the body or a parameter has a wrong type, value or an unknown field",
    "body_too_large": "the request body is larger than the service accepts",
    "body_too_deep": "the body nests arrays or objects deeper than the service accepts",
    "body_too_slow": "the request body did not arrive in time; the connection is closed",
    "unsupported_media_type": "the body must be JSON (Content-Type: application/json)",
    "token_required": "this operation needs a seat or creator token (Authorization: Bearer)",
    "invalid_token": "the token is not valid for this game",
    "not_creator": "only the game's creator may do this",
    "game_not_found": "no game has that id",
    "variant_not_found": "no variant has that name",
    "not_found": "no such resource",
    "method_not_allowed": "the resource does not support that method",
    "seat_taken": "that seat has already been claimed",
    "unknown_bot_level": "no bot plays at that level (the detail names the levels)",
    "seat_free": "that seat is not claimed",
    "no_free_seat": "every seat has been claimed",
    "seats_unclaimed": "every seat must be claimed before the game starts",
    "game_already_started": "the game has started; the lobby is closed",
    "stale_version": "If-Match names a version that is no longer the game's current one",
    "idempotency_key_reused": "the Idempotency-Key was used before with a different request",
    "conflict": "the game changed concurrently too often; retry",
    "rate_limited": "too many requests; wait for Retry-After seconds",
    "too_many_connections": "the server holds all the connections it takes; retry shortly",
    "too_many_client_connections": "this client holds all the connections one client may; "
    "reuse one, or retry shortly",
    "too_many_streams": "this client holds all the event streams one client may; close one first",
    "unavailable": "the event store is unavailable",
    "shutting_down": "the server stopped before the request was done; retry",
    "history_corrupt": "the game's stored history fails verification; an operator must look",
    "event_from_newer_release": "the stream holds an event a newer release wrote; it is "
    "served once this instance runs that release",
    "event_unreadable": "the stream holds an event that cannot be decoded; an operator must look",
    "internal_error": "an unexpected error; it has been logged",
    "projections_unavailable": "the read models are unavailable (Redis, or being rebuilt)",
    "player_not_found": "no game has started with a seat of that name",
    "hand_not_found": "the game has no such hand",
    "hand_in_play": "the hand is still in play; it is shown once it is over",
    "game_in_play": "the game is not over; only a finished game is exported or rematched",
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
    "round_not_found": "the tournament has no such round (not started, or past the last)",
    "round_not_closed": "the round has not closed yet; its standings are live",
    "rating_not_found": "no finished game has rated a player of that name",
    "not_duplicate": "the tournament deals every table its own cards: it has no travellers",
    "unknown_rules_version": "the game names a rules version this server does not implement: "
    "it is not judged by other rules",
}
ALL_CODES = {**RULE_CODES, **SERVICE_CODES}


if TYPE_CHECKING:  # a checker cannot read a Literal built from a computed tuple
    ProblemCode = str
else:
    ProblemCode = Literal[tuple(ALL_CODES)]
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
