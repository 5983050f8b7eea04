"""The generated OpenAPI document says what a generated client needs (issue 17): every union
of object schemas has a discriminator; each schema's `required` list is its Struct's fields
without defaults; a field that may be left out carries no `default` (which generators read
as "always present"); an answer served as CSV or NDJSON lists that media type."""

from __future__ import annotations

import json
from collections.abc import Iterator
from functools import cache
from typing import Any

import msgspec
import pytest

from service.cli.openapi import generate
from service.http.openapi_doc import _structs

pytestmark = pytest.mark.unit


@cache
def document() -> dict[str, Any]:
    return json.loads(generate())  # type: ignore[no-any-return]


def schemas() -> dict[str, Any]:
    return document()["components"]["schemas"]  # type: ignore[no-any-return]


def nodes(node: Any, where: str = "") -> Iterator[tuple[str, Any]]:
    """Every object in the document, with where it is."""
    if isinstance(node, dict):
        yield where, node
        for key, value in node.items():
            yield from nodes(value, f"{where}/{key}")
    elif isinstance(node, list):
        for i, value in enumerate(node):
            yield from nodes(value, f"{where}/{i}")


def is_object(schema: dict[str, Any]) -> bool:
    if "$ref" in schema:
        return is_object(schemas()[schema["$ref"].rsplit("/", 1)[-1]])
    return schema.get("type") == "object" or "properties" in schema


def test_every_union_of_object_schemas_has_a_discriminator() -> None:
    undiscriminated = [
        where
        for where, node in nodes(document())
        for union in ("oneOf", "anyOf")
        if sum(map(is_object, node.get(union, []))) >= 2 and "discriminator" not in node
    ]
    assert not undiscriminated


def test_each_discriminator_maps_every_member_by_a_tag_it_requires() -> None:
    for where, node in nodes(document()):
        if "discriminator" not in node:
            continue
        tag = node["discriminator"]["propertyName"]
        mapping = node["discriminator"]["mapping"]
        members = [member["$ref"] for member in node.get("oneOf", node.get("anyOf", []))]
        assert sorted(mapping.values()) == sorted(members), where
        for value, ref in mapping.items():
            member = schemas()[ref.rsplit("/", 1)[-1]]
            assert member["properties"][tag]["const"] == value, (where, ref)
            assert tag in member["required"], (where, ref)


def required_fields(kind: type[msgspec.Struct]) -> set[str]:
    config = kind.__struct_config__
    tag = {config.tag_field} if config.tag_field is not None else set()
    return tag | {f.encode_name for f in msgspec.structs.fields(kind) if f.required}


def test_each_schemas_required_list_is_its_structs_fields_without_defaults() -> None:
    structs = _structs()
    assert schemas().keys() <= structs.keys(), "a component that is no Struct is not checked"
    wrong = {
        name: (sorted(schema.get("required", [])), sorted(required_fields(structs[name])))
        for name, schema in schemas().items()
        if set(schema.get("required", [])) != required_fields(structs[name])
    }
    assert not wrong


def sent() -> set[str]:
    """The components a request body reaches."""
    found: set[str] = set()
    pending = [
        operation["requestBody"]
        for item in document()["paths"].values()
        for operation in item.values()
        if isinstance(operation, dict) and "requestBody" in operation
    ]
    while pending:
        for _, node in nodes(pending.pop()):
            name = node.get("$ref", "").rsplit("/", 1)[-1]
            if name and name not in found:
                found.add(name)
                pending.append(schemas()[name])
    return found


def test_a_field_that_may_be_left_out_carries_no_default() -> None:
    """A client may leave it out of a request body, or the server out of an answer
    (`omit_defaults`): a `default` there makes openapi-typescript type it as required."""
    structs = _structs()
    omitted = {name for name, kind in structs.items() if kind.__struct_config__.omit_defaults}
    assert {"CreateGame", "CreateTournament", "PlayCards"} <= sent()
    defaulted = [
        f"{name}.{field}"
        for name in sorted((sent() | omitted) & schemas().keys())
        for field, prop in schemas()[name].get("properties", {}).items()
        if "default" in prop
    ]
    assert not defaulted


def test_a_games_title_is_optional_and_says_its_default() -> None:
    title = schemas()["CreateGame"]["properties"]["title"]
    assert "title" not in schemas()["CreateGame"]["required"]
    assert "default" not in title
    assert '`""`' in title["description"]


@pytest.mark.parametrize(
    ("path", "also"),
    [
        ("/tournaments/{tournament_id}/standings", "text/csv"),
        ("/games/{game_id}/export", "application/x-ndjson"),
        ("/tournaments/{tournament_id}/standings/stream", "application/x-ndjson"),
    ],
)
def test_an_answer_served_as_csv_or_ndjson_lists_that_media_type(path: str, also: str) -> None:
    content = document()["paths"][path]["get"]["responses"]["200"]["content"]
    assert also in content
    assert content[also]["schema"]


def test_the_tournament_feed_types_its_events() -> None:
    event = schemas()["TournamentEntry"]["properties"]["event"]
    assert event["discriminator"]["propertyName"] == "type"
    assert set(event["discriminator"]["mapping"]) == {
        "tournament.created",
        "player.registered",
        "player.withdrawn",
        "player.seed_set",
        "round.started",
        "round.closed",
        "tournament.ended",
    }
    shown = set(schemas()["TournamentCreated"]["properties"])
    assert not {"organiser_hash", "token_hash"} & shown
    assert "token_hash" not in schemas()["PlayerRegistered"]["properties"]
