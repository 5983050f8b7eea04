"""An export verifies offline, and any one field of it altered fails verification, naming
that field (and the event's version where it is an event's): given a finished game's export,
when one field is changed, then `verify_export` reports it."""

from __future__ import annotations

import json
from collections.abc import Callable
from functools import cache
from typing import Any

import msgspec
import pytest

from service.audit.export import export_game, ndjson_lines
from service.audit.offline import verify_export
from service.contract.export import GameExport
from tests.support.histories import played, rows

pytestmark = pytest.mark.unit

GAME = "0123456789abcdef"
Doc = dict[str, Any]


@cache
def exported(variant: str = "golf", players: int = 2, v1: bool = False) -> bytes:
    stored, _ = played(variant, players, seed=7, v1=v1)
    return msgspec.json.encode(export_game(GAME, rows(GAME, stored)))


@pytest.mark.parametrize(
    ("variant", "players"),
    [("hang-ten", 5), ("tens", 2), ("golf", 3), ("basketball", 2), ("tens-shedding", 3)],
)
@pytest.mark.parametrize("v1", [False, True])
def test_an_honest_export_verifies_as_json_and_as_ndjson(
    variant: str, players: int, v1: bool
) -> None:
    text = exported(variant, players, v1)
    report = verify_export(text)
    assert report.ok, [f.line() for f in report.failures]
    assert [c.name for c in report.checks] == [
        "chain", "commitments", "deck", "legality", "scores", "winners", "export"
    ]  # fmt: skip
    assert all(hand.status == "verified" for hand in report.hands)
    document = msgspec.json.decode(text)
    assert list(report.winners or ()) == document["winners"]
    lines = b"".join(
        ndjson_lines(export_game(GAME, rows(GAME, played(variant, players, 7, v1=v1)[0])))
    )
    assert verify_export(lines).ok


def _event(doc: Doc, kind: str, nth: int = 0, where: Callable[[Doc], bool] = lambda d: True) -> Doc:
    found = [e for e in doc["events"] if e["type"] == kind and where(json.loads(e["data"]))]
    return found[nth]


def _data(kind: str, name: str, value: Callable[[Any], Any], nth: int = 1, **where: Any) -> Any:
    """Alter `data.<name>` of the nth `kind` event (matching `where`)."""

    def alter(doc: Doc) -> int:
        event = _event(doc, kind, nth, lambda d: all(d.get(k) == v for k, v in where.items()))
        data = json.loads(event["data"])
        data[name] = value(data[name])
        event["data"] = json.dumps(data, separators=(",", ":"))
        return int(event["version"])

    return alter


def _meta(kind: str, name: str, value: Callable[[Any], Any], nth: int = 1) -> Any:
    def alter(doc: Doc) -> int:
        event = _event(doc, kind, nth)
        metadata = json.loads(event["metadata"])
        metadata[name] = value(metadata[name])
        event["metadata"] = json.dumps(metadata, separators=(",", ":"), sort_keys=True)
        return int(event["version"])

    return alter


def _field(kind: str, name: str, value: Callable[[Any], Any], nth: int = 1) -> Any:
    def alter(doc: Doc) -> int:
        event = _event(doc, kind, nth)
        version = int(event["version"])
        event[name] = value(event[name])
        return version

    return alter


def _header(path: str, value: Callable[[Any], Any]) -> Any:
    def alter(doc: Doc) -> None:
        *parents, last = path.split(".")
        target: Any = doc
        for part in parents:
            target = target[int(part)] if isinstance(target, list) else target[part]
        key: Any = int(last) if isinstance(target, list) else last
        target[key] = value(target[key])

    return alter


def other_card(card: str) -> str:
    return "2C" if card != "2C" else "3D"


def other_hex(text: str) -> str:
    return ("1" if text[0] != "1" else "2") + text[1:]


EVENT_FIELDS = {
    "data.card (a card drawn from the stock)": (
        _data("card.drawn", "card", other_card, source="stock"),
        "data.card",
    ),
    "data.card (a card turned)": (_data("card.turned", "card", other_card), "data.card"),
    "data.replaced": (_data("card.replaced", "replaced", other_card), "data.replaced"),
    "data.row": (_data("card.replaced", "row", lambda r: 1 - r), "data.row"),
    "data.seat": (_data("card.discarded", "seat", lambda s: 1 - s), "data.seat"),
    "data.scores": (_data("hand.ended", "scores", lambda s: [s[0] + 1, *s[1:]]), "data.scores"),
    "data.totals": (_data("hand.ended", "totals", lambda s: [s[0] - 1, *s[1:]]), "data.totals"),
    "data.reason": (_data("hand.ended", "reason", lambda r: "turn_limit"), "data.reason"),
    "data.winners": (_data("game.ended", "winners", lambda w: [1 - w[0]], nth=0), "data.winners"),
    "data.seed (deal)": (_data("hand.dealt", "seed", other_hex), "data.seed"),
    "data.server_seed (deal)": (_data("hand.dealt", "server_seed", other_hex), "data.server_seed"),
    "data.seat_seeds": (
        _data("hand.dealt", "seat_seeds", lambda s: ["x", *s[1:]]),
        "data.seat_seeds",
    ),
    "data.commitment": (_data("hand.dealt", "commitment", other_hex), "data.commitment"),
    "data.dealer": (_data("hand.dealt", "dealer", lambda d: 1 - d), "data.dealer"),
    "data.seed (revealed)": (_data("hand.ended", "seed", other_hex), "data.seed"),
    "data.server_seed (revealed)": (
        _data("hand.ended", "server_seed", other_hex),
        "data.server_seed",
    ),
    "metadata.action": (
        _meta("card.replaced", "action", lambda a: {**a, "col": (a["col"] + 1) % 4}),
        "metadata.action",
    ),
    "metadata.seat": (_meta("card.replaced", "seat", lambda s: 1 - s), "metadata.seat"),
    "event_id": (
        _field("card.replaced", "event_id", lambda i: i[:-1] + ("0" if i[-1] != "0" else "1")),
        "event_id",
    ),
    "type": (_field("card.replaced", "type", lambda t: "card.turned"), "type"),
    "schema_version": (
        _field("card.replaced", "schema_version", lambda v: v + 1),
        "schema_version",
    ),
    "version": (_field("card.replaced", "version", lambda v: v + 1000), "version"),
    "hash": (_field("card.replaced", "hash", other_hex), "hash"),
    "prev_hash": (_field("card.replaced", "prev_hash", other_hex), "prev_hash"),
}


@pytest.mark.parametrize("case", EVENT_FIELDS, ids=list(EVENT_FIELDS))
def test_an_events_field_altered_fails_at_its_version_naming_it(case: str) -> None:
    alter, field = EVENT_FIELDS[case]
    doc = json.loads(exported())
    version = alter(doc)
    report = verify_export(json.dumps(doc).encode())
    assert not report.ok
    lines = [failure.line() for failure in report.failures]
    assert any(line.startswith(f"version {version}: ") and field in line for line in lines), lines


HEADER_FIELDS = {
    "game_id": (_header("game_id", lambda g: "f" + g[1:]), "version 1: game_id"),
    "variant": (_header("variant", lambda v: "tens"), "document: variant"),
    "rules.columns": (_header("rules.columns", lambda c: c + 1), "document: rules.columns"),
    "rules.turn_limit": (
        _header("rules.turn_limit", lambda t: t + 1),
        "document: rules.turn_limit",
    ),
    "options": (_header("options", lambda o: {"hands": 3}), "document: options"),
    "seats": (_header("seats.0.name", lambda n: "mallory"), "document: seats"),
    "seeds[1].seed": (_header("seeds.1.seed", other_hex), "document: seeds[1].seed"),
    "seeds[1].commitment": (
        _header("seeds.1.commitment", other_hex),
        "document: seeds[1].commitment",
    ),
    "seeds[2].hand": (_header("seeds.2.hand", lambda h: 40), "document: seeds[2].hand"),
    "winners": (_header("winners", lambda w: [1 - w[0]]), "document: winners"),
    "event_count": (_header("event_count", lambda n: n - 1), "document: event_count"),
    "head_hash": (_header("head_hash", other_hex), "document: head_hash"),
}


@pytest.mark.parametrize("case", HEADER_FIELDS, ids=list(HEADER_FIELDS))
def test_a_header_field_altered_fails_naming_it(case: str) -> None:
    alter, named = HEADER_FIELDS[case]
    doc = json.loads(exported())
    alter(doc)
    report = verify_export(json.dumps(doc).encode())
    assert not report.ok
    lines = [failure.line() for failure in report.failures]
    assert any(line.startswith(named) for line in lines), lines


def test_an_altered_seed_anchor_fails_at_the_game_created_event() -> None:
    """(domain/fairness.py names the chain's secret here: an anchor and its secret are
    checked against each other, and the field is the fair work's to name.)"""
    doc = json.loads(exported())
    version = _data("game.created", "seed_anchor", other_hex, nth=0)(doc)
    lines = [f.line() for f in verify_export(json.dumps(doc).encode()).failures]
    assert any(line.startswith(f"version {version}: data.") for line in lines), lines


def test_a_cut_tail_or_a_deleted_event_fails() -> None:
    doc = json.loads(exported())
    doc["events"] = doc["events"][:-3]
    lines = [f.line() for f in verify_export(json.dumps(doc).encode()).failures]
    assert any(line.startswith("document: event_count") for line in lines), lines
    doc = json.loads(exported())
    removed = doc["events"].pop(40)["version"]
    lines = [f.line() for f in verify_export(json.dumps(doc).encode()).failures]
    assert any(line.startswith(f"version {removed}: version") for line in lines), lines


def test_not_an_export_is_refused_naming_what_does_not_fit() -> None:
    doc = json.loads(exported())
    doc["format"] = "something-else/9"
    with pytest.raises(ValueError, match="format"):
        verify_export(json.dumps(doc).encode())
    with pytest.raises(ValueError, match="not a fairway-game-export/1 document"):
        verify_export(b"not json at all")
    lines = b"".join(ndjson_lines(msgspec.json.decode(exported(), type=GameExport)))
    bad = len(lines.splitlines()) + 1
    with pytest.raises(ValueError, match=f"line {bad} is not an exported event"):
        verify_export(lines + b"{]\n")


def test_an_export_without_its_game_is_no_finished_game() -> None:
    doc = json.loads(exported())
    empty = {**doc, "events": [], "event_count": 0, "head_hash": ""}
    lines = [f.line() for f in verify_export(json.dumps(empty).encode()).failures]
    assert "document: events hold no game.created: not a game" in lines
    unfinished = json.loads(exported())
    unfinished["events"] = unfinished["events"][:30]
    unfinished["event_count"] = 30
    unfinished["head_hash"] = unfinished["events"][-1]["hash"]
    lines = [f.line() for f in verify_export(json.dumps(unfinished).encode()).failures]
    assert "document: events hold no game.ended: not a finished game" in lines


def test_a_second_game_started_is_reported() -> None:
    doc = json.loads(exported())
    started = _event(doc, "game.started")
    dealt = _event(doc, "hand.dealt", 1)
    dealt.update({k: started[k] for k in ("type", "data")})
    lines = [f.line() for f in verify_export(json.dumps(doc).encode()).failures]
    assert any(line.startswith(f"version {dealt['version']}: type a second") for line in lines)
