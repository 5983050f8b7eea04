"""OpenAPI documentation shared by the controllers: problem responses and body examples."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from litestar.datastructures import ResponseHeader
from litestar.openapi.datastructures import ResponseSpec
from litestar.openapi.spec import Example, OpenAPIMediaType, OpenAPIType, Schema
from litestar.params import Body

from service.contract.problems import PROBLEM_JSON, Problem
from service.contract.schemas import StreamMessage

_WHY = {
    400: "Malformed request (`malformed_request`, `body_too_deep`, `invalid_request` for a "
    "path, query or header value)",
    401: "No token, or a token that holds no seat here (`token_required`, `invalid_token`)",
    403: "A valid token without the right (`not_creator`, `not_your_seat`)",
    404: "No such game or variant (`game_not_found`, `variant_not_found`)",
    409: "The game's state forbids it now (`not_your_turn`, `wrong_phase`, `game_over`, "
    "`stale_version`, `seat_taken`, `seat_free`, `seat_resigned`, `conflict`, ...)",
    408: "The body did not arrive in time (`body_too_slow`); the connection is closed",
    413: "The body is too large (`body_too_large`)",
    415: "The body is not JSON (`unsupported_media_type`)",
    422: "Well-formed but not acceptable (`invalid_request`, `illegal_position`, "
    "`card_not_available`, `idempotency_key_reused`, ...)",
    429: "Rate limited (`rate_limited`), or this client holds all the connections one client "
    "may (`too_many_client_connections`); see `Retry-After`",
    500: "The game's stored history fails verification (`history_corrupt`), or an unexpected "
    "error (`internal_error`)",
    503: "The event store is unavailable (`unavailable`) or the server is at its connection "
    "cap (`too_many_connections`); see `Retry-After`",
}


def problem(description: str) -> ResponseSpec:
    """A problem-details response, described."""
    return ResponseSpec(
        Problem, generate_examples=False, description=description, media_type=PROBLEM_JSON
    )


def problems(*statuses: int) -> dict[int, ResponseSpec]:
    return {status: problem(_WHY[status]) for status in statuses}


@dataclass
class Negotiated(ResponseSpec):
    """An answer served in more than one media type, as `Accept` asks: Litestar writes
    `data_container` as `media_type`, and one media type per answer only, so the others,
    `also`, are added to the document by service/http/openapi_doc.py."""

    generate_examples: bool = False
    also: dict[str, OpenAPIMediaType] = field(default_factory=dict)


def text(description: str, example: str | None = None) -> OpenAPIMediaType:
    """A body of text (CSV, NDJSON) in the document: a string, described."""
    return OpenAPIMediaType(
        schema=Schema(type=OpenAPIType.STRING, description=description), example=example
    )


NOT_MODIFIED = {
    304: ResponseSpec(
        None,
        generate_examples=False,
        description="Not modified: the game is still at the version named in `If-None-Match`",
    )
}
# What every request may meet before it reaches a handler, and what reading a game may meet.
_ANY = (400, 429, 503)
_BODY = (408, 413, 415)
_GAME = (404, 500)

CREATE = problems(*_ANY, *_BODY, 409, 422)  # 409: two bots named for one seat
READ = NOT_MODIFIED | problems(*_ANY, *_GAME)
SEAT_READ = NOT_MODIFIED | problems(*_ANY, *_GAME, 401)
CLAIM = problems(*_ANY, *_BODY, *_GAME, 409, 422)
RELEASE = problems(*_ANY, *_GAME, 401, 403, 409, 422)
START = problems(*_ANY, *_GAME, 401, 403, 409, 422)
RESIGN = problems(*_ANY, *_GAME, 401, 403, 409, 422)
SEAT_BOT = problems(*_ANY, *_BODY, *_GAME, 401, 403, 409, 422)
REMATCH = problems(*_ANY, *_GAME, 401, 409)
PLAY = problems(*_ANY, *_BODY, *_GAME, 401, 409, 422)
VARIANT_LIST = problems(429)
VARIANT = problems(400, 404, 429)
SCORE = problems(400, 429, *_BODY, 404, 422)  # a pure computation: no store, no 503
STREAM = {
    200: ResponseSpec(
        StreamMessage,
        generate_examples=False,
        media_type="text/event-stream",
        description="Server-Sent Events: one message per event (`StreamMessage` gives each "
        "SSE field), `: keep-alive` comments while idle; ends after `game.ended`",
    ),
    204: ResponseSpec(
        None,
        generate_examples=False,
        description="The game is over and every event after the given version was sent: "
        "nothing more will come (EventSource stops reconnecting)",
    ),
} | problems(*_ANY, *_GAME, 401)
STREAM[429] = ResponseSpec(  # a stream meets one more 429
    Problem,
    generate_examples=False,
    description=f"{_WHY[429]}; or this client holds all the event streams one client may "
    "(`too_many_streams`): close one first",
    media_type=PROBLEM_JSON,
)

ETAG = [
    ResponseHeader(
        name="ETag",
        description='The game\'s version (`"12"`): send it in `If-None-Match` to read again '
        "cheaply, or in `If-Match` to act on exactly this version",
        documentation_only=True,
    )
]
CREATED_HEADERS = [
    *ETAG,
    ResponseHeader(
        name="Location", description="Where the new resource lives", documentation_only=True
    ),
]


def examples(description: str, **named: Any) -> Any:
    return Body(
        description=description,
        examples=[
            Example(summary=name.replace("_", " "), value=value) for name, value in named.items()
        ],
    )


CREATE_GAME = examples(
    "The variant, the number of seats, optional house options, and seats for bots.",
    golf_for_four={"variant": "golf", "seats": 4, "title": "Friday golf"},
    short_hang_ten={"variant": "hang-ten", "seats": 5, "options": {"hands": 3}},
    shedding={"variant": "tens-shedding", "seats": 3, "options": {"grab_min": 17, "grab_max": 21}},
    golf_against_two_bots={
        "variant": "golf",
        "seats": 3,
        "bots": [{"seat": 1, "level": "greedy"}, {"seat": 2, "level": "random", "name": "Rando"}],
    },
)
SEAT_BOT_BODY = examples(
    "The bot's level, and the name its seat shows (`<level> bot <seat>` when omitted).",
    a_greedy_bot={"level": "greedy"},
    a_named_random_bot={"level": "random", "name": "Rando"},
)
CLAIM_SEAT = examples(
    "A display name, and the seat wanted (the lowest free one when omitted).",
    any_seat={"name": "Ada"},
    seat_two={"name": "Grace", "seat": 2},
)
ACTION = examples(
    "One action of the game's variant; `GET /games/{id}/me` lists the legal ones.",
    setup_flip={"type": "setup-flip", "row": 1, "col": 3},
    draw_from_stock={"type": "draw", "source": "stock"},
    take_an_opponents_discard={"type": "draw", "source": "pile", "from_seat": 2},
    replace={"type": "replace", "row": 0, "col": 1},
    discard={"type": "discard"},
    flip_after_discard={"type": "flip", "row": 0, "col": 2},
    basketball_peek={"type": "peek"},
    golf_go_out={"type": "go-out"},
    shedding_choose_stacks={"type": "choose-stacks", "cards": ["KS", "QD", "9H", "9C"]},
    shedding_play={"type": "play", "hand": ["7H", "7D"], "stacks": [2]},
    shedding_play_blind={"type": "play-blind", "stack": 0},
    shedding_end_play={"type": "end-play"},
)
SCORE_BODY = examples(
    "Grid variants: two rows of cards; tens-shedding: the remaining cards.",
    tens_layout={"cards": [["AS", "7H", "7D", "7C", "KS"], ["AH", "7S", "7H", "9D", "JC"]]},
    golf_layout={"cards": [["6S", "AH", "4D", "TC"], ["2S", "KH", "4C", "TD"]]},
    shedding_cards={"cards": ["TS", "AS", "KD"]},
)
SEED = problems(*_ANY, *_BODY, *_GAME, 401, 403, 409, 422)
SET_SEED = examples(
    "Your seat's seed for the hands dealt from now on (public; docs/SHUFFLE.md).",
    a_phrase={"seed": "the quick brown fox"},
    dice_rolls={"seed": "3 6 1 1 4 2 5 6 2 3"},
)
