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

Applied once to the app's OpenAPI object, which both the served and the committed document
come from.
"""

from __future__ import annotations

import dataclasses
from typing import Any

import msgspec
from litestar.openapi.spec import Discriminator, OpenAPI, OpenAPIType, Reference, Schema

from service.contract.public import PUBLIC_EVENTS


def complete(openapi: OpenAPI) -> None:
    schemas: dict[str, Any] = dict(openapi.components.schemas or {})  # type: ignore[union-attr]

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

    seen: set[int] = set()

    def visit(node: Any) -> None:
        if id(node) in seen:
            return
        seen.add(id(node))
        if isinstance(node, Schema) and node.one_of:
            discriminate(node)
        if dataclasses.is_dataclass(node):
            for f in dataclasses.fields(node):
                visit(getattr(node, f.name))
        elif isinstance(node, dict):
            for value in node.values():
                visit(value)
        elif isinstance(node, list | tuple):
            for value in node:
                visit(value)

    visit(openapi)
    structs = _structs()
    for name in structs.keys() & schemas.keys():
        if structs[name].__struct_config__.forbid_unknown_fields:
            schemas[name].additional_properties = False
        _check_as_msgspec_does(schemas[name], structs[name])


def _structs() -> dict[str, type[msgspec.Struct]]:
    """Every Struct by its component name; an event's public shape stands for its stored one."""
    found: dict[str, type[msgspec.Struct]] = {}
    pending: list[type[msgspec.Struct]] = [msgspec.Struct]
    while pending:
        kind = pending.pop()
        pending.extend(kind.__subclasses__())
        if kind is not msgspec.Struct:
            found.setdefault(kind.__name__, kind)
    return found | {kind.__name__: kind for kind in PUBLIC_EVENTS}


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
