"""Request bodies: JSON only, nested no deeper than the API's shapes need, decoded strictly.

Litestar decodes a body to builtins and then converts it leniently (`"2"`, `2.0` and `1e1`
all become the integer 2) and lets msgspec recurse as deep as the body nests. Here the body
is checked first and then decoded once, strictly, straight into the handler's `data` type.
"""

from __future__ import annotations

import re
from functools import cache
from itertools import accumulate
from typing import Any

import msgspec
from litestar import Request
from litestar.exceptions import InternalServerException, ValidationException

from service.contract.problems import ApiError

MAX_DEPTH = 32
"""The API's bodies nest three levels at most (a layout's rows); refuse far deeper ones."""

_STRING = re.compile(rb'"(?:[^"\\]|\\.)*"', re.DOTALL)
_NOT_BRACKET = re.compile(rb"[^\[\]{}]")
_WHERE = re.compile(r"^(?P<message>.*?)(?: - at `\$(?P<key>[^`]*)`)?$", re.DOTALL)


def is_json(media_type: str) -> bool:
    """`application/json`, or a JSON-based type such as `application/merge-patch+json`."""
    media_type = media_type.lower()
    return media_type == "application/json" or (
        media_type.startswith("application/") and media_type.endswith("+json")
    )


def nests_deeper_than(limit: int, body: bytes) -> bool:
    """Whether arrays and objects nest deeper than `limit` in `body` (strings not counted)."""
    if body.count(b"[") + body.count(b"{") <= limit:
        return False  # the common case, decided by two scans in C
    brackets = _NOT_BRACKET.sub(b"", _STRING.sub(b"", body))
    return max(accumulate(1 if c in b"[{" else -1 for c in brackets), default=0) > limit


@cache
def _decoder(data_type: Any) -> msgspec.json.Decoder[Any]:
    return msgspec.json.Decoder(data_type, strict=True)


class JsonRequest(Request[Any, Any, Any]):
    """A request whose `json()` is the handler's `data`, decoded strictly from a JSON body."""

    async def body(self) -> bytes:
        """The whole body; a client gone before sending all of it is a 400, not a 500 with a
        traceback in the log (Litestar raises InternalServerException for it)."""
        try:
            return await super().body()
        except InternalServerException:
            raise ApiError(
                400, "malformed_request", "the client went away before sending the whole body"
            ) from None

    async def json(self) -> Any:
        body = await self.body()
        media_type, _ = self.content_type
        if not is_json(media_type):
            raise ApiError(
                415,
                "unsupported_media_type",
                f"send the body as Content-Type: application/json, not {media_type or 'none'!r}",
            )
        if nests_deeper_than(MAX_DEPTH, body):
            raise ApiError(
                400, "body_too_deep", f"arrays and objects nest deeper than {MAX_DEPTH} levels"
            )
        field = self.route_handler.parsed_data_field
        data_type = Any if field is None else field.annotation
        try:
            return _decoder(data_type).decode(body)
        except msgspec.ValidationError as error:
            where = _WHERE.match(str(error))
            message, key = (where["message"], where["key"]) if where else (str(error), None)
            extra = {"message": message, "key": (key or "").lstrip("."), "source": "body"}
            raise ValidationException(
                detail=f"Validation failed for {self.method} {self.url.path}", extra=[extra]
            ) from None
        except msgspec.DecodeError as error:
            raise ApiError(400, "malformed_request", f"the body is not JSON: {error}") from None
