"""What the OpenAPI document must say that Litestar does not write by itself.

- A union whose members are all tagged by one constant property (`type`, `family`) gets a
  `discriminator` with its mapping, so a generated client picks the member by the tag.
- A body that refuses unknown fields says so: `additionalProperties: false`.
- A field made only of scalars and arrays has the schema msgspec checks it against. Litestar
  drops the constraints of an array's items (a card's pattern, a stack's range), a `minimum`
  of 0 beside `None`, and a fixed tuple's length, and it writes the items of
  `Annotated[tuple[X, ...], Meta(...)]` as `oneOf: [X, {}]`, which a generated client types
  as `Any`. A field that names a component or a closed set (`$ref`, `enum`) keeps
  Litestar's schema, and so the tags the discriminators read.
- A field that may be left out has no `default` keyword: generators read `default` as
  "always present" (openapi-typescript types such a field as required). That holds of an
  answer's field, which msgspec always writes, but not of a field a client may leave out of
  a request body, nor of one the server leaves out (`omit_defaults`): those say their
  default in their description.
- An answer served in more than one media type (`docs.Negotiated`) lists them all.
- An event stream's message says what its `data` holds: JSON text of a `FeedEntry`.

Applied once to the app's OpenAPI object, which both the served and the committed document
come from, as Litestar builds it: on the first request for the document (or for
`fairway openapi`), not at start. Built, it holds about 4 MB for the process's life, in every
worker, and most workers are never asked for it.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Iterator
from typing import Any

import msgspec
from litestar import Litestar
from litestar._openapi.plugin import OpenAPIPlugin
from litestar.openapi.spec import Discriminator, OpenAPI, OpenAPIType, Reference, Schema
from litestar.routes import HTTPRoute

from service.contract.public import PUBLIC_EVENTS, TOURNAMENT_EVENTS
from service.http.docs import Negotiated


class _Completing(OpenAPIPlugin):
    """Litestar's OpenAPI plugin, which builds the document when first asked for it and
    keeps it; this one completes it as it builds it."""

    __slots__ = ()

    def _build_openapi(self) -> OpenAPI:
        openapi = super()._build_openapi()
        complete(self.app, openapi)
        return openapi


def complete_when_built(app: Litestar) -> None:
    """Have the app's document completed when it is built.

    Litestar makes its own plugin (one with no hook after the build) in the app's
    constructor, so the plugin made is given this subclass, which adds no state to it.
    """
    plugin = app.plugins.get(OpenAPIPlugin)
    if type(plugin) is not OpenAPIPlugin or plugin._openapi is not None:
        raise RuntimeError("complete_when_built: call it once, before the document is built")
    plugin.__class__ = _Completing


def complete(app: Litestar, openapi: OpenAPI) -> None:
    _negotiated(app, openapi)
    schemas: dict[str, Any] = dict(openapi.components.schemas or {})

    def tag_of(member: Reference) -> tuple[str, str] | None:
        target = schemas.get(member.ref.rsplit("/", 1)[-1])
        if not isinstance(target, Schema):
            return None
        for name, prop in (target.properties or {}).items():
            if isinstance(prop, Schema) and isinstance(prop.const, str):
                return name, prop.const
        return None

    def discriminate(node: Schema) -> None:
        members = node.one_of or []
        refs = [m for m in members if isinstance(m, Reference)]
        others = [m for m in members if not isinstance(m, Reference)]
        tags = [tag_of(ref) for ref in refs]
        if len(refs) < 2 or None in tags or len({tag[0] for tag in tags if tag}) != 1:
            return
        discriminator = Discriminator(
            property_name=tags[0][0],  # type: ignore[index]
            mapping={tag[1]: ref.ref for tag, ref in zip(tags, refs, strict=True) if tag},
        )
        if others:  # `X | Y | None`: the tagged members in a union of their own
            node.one_of = [Schema(one_of=refs, discriminator=discriminator), *others]
        else:
            node.discriminator = discriminator

    for node in list(_nodes(openapi)):
        if isinstance(node, Schema) and node.one_of:
            discriminate(node)
    structs = _structs()
    sent = _sent(openapi, schemas)
    for name in structs.keys() & schemas.keys():
        config = structs[name].__struct_config__
        if config.forbid_unknown_fields:
            schemas[name].additional_properties = False
        _check_as_msgspec_does(schemas[name], structs[name])
        if name in sent or config.omit_defaults:
            _defaults_in_words(schemas[name])
    _stream_data(openapi)  # after the field checks, which would write `data` again


def _nodes(root: Any) -> Iterator[Any]:
    """Every node of a part of the document, once (spec objects are dataclasses)."""
    seen: set[int] = set()
    pending = [root]
    while pending:
        node = pending.pop()
        if id(node) in seen:
            continue
        seen.add(id(node))
        yield node
        if dataclasses.is_dataclass(node):
            pending.extend(getattr(node, f.name) for f in dataclasses.fields(node))
        elif isinstance(node, dict):
            pending.extend(node.values())
        elif isinstance(node, list | tuple):
            pending.extend(node)


def _operations(openapi: OpenAPI) -> Iterator[Any]:
    for item in (openapi.paths or {}).values():
        for method in ("get", "put", "post", "delete", "options", "head", "patch", "trace"):
            if (operation := getattr(item, method, None)) is not None:
                yield operation


def _negotiated(app: Litestar, openapi: OpenAPI) -> None:
    """Each `docs.Negotiated` answer gets its other media types beside the one Litestar
    wrote."""
    for route in app.routes:
        if not isinstance(route, HTTPRoute):
            continue
        item = (openapi.paths or {}).get(route.path_format)
        for handler in route.route_handlers:
            for status, spec in (handler.responses or {}).items():
                if not isinstance(spec, Negotiated):
                    continue
                for method in handler.http_methods:
                    operation = getattr(item, method.lower(), None)
                    if operation is not None:
                        answer = operation.responses[str(status)]
                        answer.content = {**(answer.content or {}), **spec.also}


def _stream_data(openapi: OpenAPI) -> None:
    """Say what an event stream message's `data` holds: JSON text of a `FeedEntry` (the JSON
    Schema way for string-encoded content, which OpenAPI 3.2 uses for event streams)."""
    message = (openapi.components.schemas or {}).get("StreamMessage")
    if isinstance(message, Schema) and message.properties:
        data = message.properties["data"]
        if isinstance(data, Schema):
            data.content_media_type = "application/json"
            data.content_schema = Reference(ref="#/components/schemas/FeedEntry")


def _sent(openapi: OpenAPI, schemas: dict[str, Any]) -> set[str]:
    """The components a request body reaches: what a client sends."""
    sent: set[str] = set()
    pending: list[Any] = [op.request_body for op in _operations(openapi) if op.request_body]
    while pending:
        for node in _nodes(pending.pop()):
            name = node.ref.rsplit("/", 1)[-1] if isinstance(node, Reference) else None
            if name in schemas and name not in sent:
                sent.add(name)
                pending.append(schemas[name])
    return sent


def _defaults_in_words(component: Schema) -> None:
    """A field that may be left out keeps its default in its description, not in `default`
    (which generators read as "always present")."""
    for name, prop in (component.properties or {}).items():
        if not isinstance(prop, Schema) or prop.default is None:
            continue
        if name in (component.required or ()):
            continue
        said = f"Default (when left out): `{msgspec.json.encode(prop.default).decode()}`."
        prop.description = f"{prop.description} {said}" if prop.description else said
        prop.default = None


def _structs() -> dict[str, type[msgspec.Struct]]:
    """Every Struct by its component name; an event's public shape stands for its stored one."""
    found: dict[str, type[msgspec.Struct]] = {}
    pending: list[type[msgspec.Struct]] = [msgspec.Struct]
    while pending:
        kind = pending.pop()
        pending.extend(kind.__subclasses__())
        if kind is not msgspec.Struct:
            found.setdefault(kind.__name__, kind)
    return found | {kind.__name__: kind for kind in (*PUBLIC_EVENTS, *TOURNAMENT_EVENTS)}


def _check_as_msgspec_does(component: Schema, kind: type[msgspec.Struct]) -> None:
    """Each field of scalars and arrays gets msgspec's schema for it (Litestar's default and
    description kept)."""
    _, found = msgspec.json.schema_components([kind])
    fields = found.get(kind.__name__, {}).get("properties", {})
    properties = component.properties or {}
    if set(fields) != set(properties):
        return
    for name, wanted in fields.items():
        written = properties[name]
        exact = None if _names_a_type(wanted) else _schema(wanted)
        if exact is None or not isinstance(written, Schema):
            continue
        exact.default = written.default
        exact.description = exact.description or written.description
        properties[name] = exact


def _names_a_type(node: Any) -> bool:
    if isinstance(node, dict):
        return "$ref" in node or "enum" in node or any(map(_names_a_type, node.values()))
    if isinstance(node, list):
        return any(map(_names_a_type, node))
    return False


_KEYWORDS = {
    "description": "description",
    "pattern": "pattern",
    "minimum": "minimum",
    "maximum": "maximum",
    "exclusiveMinimum": "exclusive_minimum",
    "exclusiveMaximum": "exclusive_maximum",
    "minLength": "min_length",
    "maxLength": "max_length",
    "minItems": "min_items",
    "maxItems": "max_items",
}


def _schema(node: dict[str, Any]) -> Schema | None:
    """A msgspec JSON Schema of scalars and arrays as Litestar's `Schema`; None if it says
    more than that. Its `default` is left out; `X | None` is a `oneOf`, as Litestar writes
    it (the members never overlap)."""
    values: dict[str, Any] = {}
    for key, value in node.items():
        if key == "type" and isinstance(value, str):
            values["type"] = OpenAPIType(value)
        elif key == "anyOf":
            members = [_schema(member) for member in value]
            if None in members:
                return None
            values["one_of"] = members
        elif key == "items" and isinstance(value, dict):
            values["items"] = _schema(value)
            if values["items"] is None:
                return None
        elif key == "items" and value is False:
            continue  # a fixed tuple: `prefixItems` with `minItems` = `maxItems` says it all
        elif key == "prefixItems":
            values["prefix_items"] = [_schema(member) for member in value]
            if None in values["prefix_items"]:
                return None
        elif key in _KEYWORDS:
            values[_KEYWORDS[key]] = value
        elif key != "default":
            return None
    return Schema(**values)
