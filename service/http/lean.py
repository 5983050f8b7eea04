"""The lean path: `POST /games/{id}/actions`, the one request a game is played with, served in
front of Litestar's router.

Through the router, each action paid for its routing, its dependency injection, the parsing
and validation of every parameter by signature models, the exception middleware and the
response's assembly: about a fifth of the server's time per action (docs/BENCHMARKS.md, "The
HTTP edge"). Here a request of the common shape (the path exactly, `Content-Type:
application/json`, the route's headers each at most once and valid, a body within the
route's limit that decodes strictly as an action) is answered by the route's own function
(service/http/acting.py), its errors by the app's own exception handlers
(service/http/problems.py), and its response is assembled as Litestar assembles it: the same
bytes. Any other request of this route (another content type, a body too large, too deep or
not an action, an invalid header, a browser's `Origin`) goes on to Litestar with its body
as it came, and Litestar answers it as it always did. The middleware outside both
(service/http/middleware.py: request id, rate limit, logs, metrics) sees no difference.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from inspect import getmro
from typing import Any

import msgspec
from litestar import Litestar, Response
from litestar.routes import HTTPRoute
from litestar.serialization import get_serializer
from litestar.types import ASGIApp, Receive, Send

from service.http.acting import Action, take_action
from service.http.bodies import MAX_DEPTH, JsonRequest, _decoder, nests_deeper_than
from service.http.problems import EXCEPTION_HANDLERS
from service.play.games import GameService

PATH = re.compile(r"/games/([0-9a-f]{16})/actions")
ROUTE = "/games/{game_id:str}/actions"
_KEY = re.compile(rb"[\x21-\x7e]{1,128}")
_MAX_IF_MATCH = 40
_READ = {
    b"authorization",
    b"content-type",
    b"content-length",
    b"transfer-encoding",
    b"idempotency-key",
    b"if-match",
    b"origin",
}
"""The headers the lean path reads: each at most once, or the request goes to Litestar."""


def lean_actions(app: Litestar, router: ASGIApp, games: Callable[[], GameService]) -> ASGIApp:
    """`router` (Litestar's handler), with the action route's common requests answered first.
    `games` gives the game service once the app has started."""
    route = next(r for r in app.routes if r.path == ROUTE and isinstance(r, HTTPRoute))
    template = route.path_format
    max_body = next(iter(route.route_handlers)).resolve_request_max_body_size() or 0
    decoder = _decoder(Action)
    encoder = msgspec.json.Encoder(enc_hook=get_serializer())

    async def handle(scope: Any, receive: Receive, send: Send) -> None:
        if scope["method"] != "POST" or (matched := PATH.fullmatch(scope["path"])) is None:
            await router(scope, receive, send)
            return
        heads = _headers(scope)
        if heads is None or not _common(heads, max_body):
            await router(scope, receive, send)
            return
        came: list[dict[str, Any]] = []
        data = await _read_action(receive, came, max_body, decoder)
        if data is None:
            await router(scope, _replaying(came, receive), send)
            return
        scope["path_template"] = template
        scope["path_params"] = {"game_id": matched[1]}
        try:
            body, last = await take_action(
                games(),
                matched[1],
                data,
                heads.get(b"authorization"),
                heads.get(b"idempotency-key"),
                heads.get(b"if-match"),
            )
        except Exception as error:  # every error is answered, by the handler Litestar picks
            await _send(_handler(error)(JsonRequest(scope), error), send)
            return
        await _send_answer(encoder.encode(body), last, send)

    return handle


def _handler(error: Exception) -> Callable[..., Response[Any]]:
    """The app's handler for `error`: the first of its classes that has one."""
    handler: Callable[..., Response[Any]] = next(
        EXCEPTION_HANDLERS[c] for c in getmro(type(error)) if c in EXCEPTION_HANDLERS
    )
    return handler


def _headers(scope: Any) -> dict[bytes, str] | None:
    """The headers the lean path reads, by name; None if one of them comes twice."""
    found: dict[bytes, str] = {}
    for name, value in scope["headers"]:
        if name in _READ:
            if name in found:
                return None
            found[name] = value.decode("latin-1")
    return found


def _common(heads: dict[bytes, str], max_body: int) -> bool:
    """Whether the head is of the shape the lean path serves (what the route's parameters
    would accept); the rest go to Litestar, which answers them as it always has."""
    if heads.get(b"content-type") != "application/json" or b"origin" in heads:
        return False
    if b"transfer-encoding" in heads:
        return False
    length = heads.get(b"content-length", "0")
    if not length.isdigit() or int(length) > max_body:
        return False
    key = heads.get(b"idempotency-key")
    if key is not None and not _KEY.fullmatch(key.encode("latin-1")):
        return False
    if_match = heads.get(b"if-match")
    return if_match is None or len(if_match) <= _MAX_IF_MATCH


async def _read_action(
    receive: Any, came: list[dict[str, Any]], max_body: int, decoder: msgspec.json.Decoder[Any]
) -> Any:
    """The body decoded strictly as an action; None when it is not one or not whole (what
    came so far is in `came`, for Litestar to read again)."""
    chunks = []
    size = 0
    while True:
        message = await receive()
        came.append(message)
        if message["type"] != "http.request":
            return None
        chunk = message.get("body", b"")
        size += len(chunk)
        if size > max_body:
            return None
        chunks.append(chunk)
        if not message.get("more_body", False):
            break
    body = b"".join(chunks)
    if nests_deeper_than(MAX_DEPTH, body):
        return None
    try:
        return decoder.decode(body)
    except (msgspec.ValidationError, msgspec.DecodeError):
        return None


def _replaying(came: list[dict[str, Any]], receive: Any) -> Any:
    """`receive`, giving first what the lean path has read already."""
    pending = list(came)

    async def replay() -> Any:
        if pending:
            return pending.pop(0)
        return await receive()

    return replay


async def _send_answer(content: bytes, version: int, send: Any) -> None:
    """The action's answer as `answer` (service/http/params.py) makes it and `_send` sends it,
    the same bytes, without building and rendering a Litestar response: its body encoded by
    the encoder Litestar's own serializer makes (`lean_actions`)."""
    headers = [
        (b"etag", b'"%d"' % version),
        (b"content-type", b"application/json"),
        (b"content-length", b"%d" % len(content)),
    ]
    await send({"type": "http.response.start", "status": 200, "headers": headers})
    await send({"type": "http.response.body", "body": content, "more_body": False})


async def _send(response: Response[Any], send: Any) -> None:
    """`response` as Litestar sends it: its headers, then its content type and length, then
    its body rendered by Litestar."""
    media_type = str(response.media_type or "application/json")
    serializer = get_serializer(response.response_type_encoders)
    body = response.render(response.content, media_type, serializer)
    headers = [
        (name.lower().encode("latin-1"), str(value).encode("latin-1"))
        for name, value in response.headers.items()
    ]
    headers += [(b"content-type", media_type.encode()), (b"content-length", b"%d" % len(body))]
    await send({"type": "http.response.start", "status": response.status_code, "headers": headers})
    await send({"type": "http.response.body", "body": body, "more_body": False})
