"""What the service answers is what the committed OpenAPI document declares (issue 17): a
tournament's events validate against their typed union, each against the member its `type`
names, and are the stored events less their token hashes, the seed secret null until the
end; every CSV and NDJSON answer comes with a media type the document lists for it."""

from __future__ import annotations

import json
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import jsonschema
import psycopg
import pytest
from referencing import Registry
from referencing.jsonschema import DRAFT202012

from tests.support.tournaments import play_over_http

pytestmark = pytest.mark.api

DOCUMENT = json.loads(
    (Path(__file__).resolve().parents[2] / "openapi" / "openapi.json").read_text()
)
URI = "urn:fairway:openapi"
REGISTRY: Registry[Any] = Registry().with_resource(URI, DRAFT202012.create_resource(DOCUMENT))
HIDDEN = {"tournament.created": "organiser_hash", "player.registered": "token_hash"}
WAIT = 30.0


def errors(body: Any, component: str) -> list[str]:
    """Where `body` breaks the document's schema `component` (none: it conforms)."""
    schema = {"$ref": f"{URI}#/components/schemas/{component}"}
    validator = jsonschema.Draft202012Validator(schema, registry=REGISTRY)
    return [f"{list(e.absolute_path)}: {e.message}" for e in validator.iter_errors(body)]


def stored(database_url: str, stream: str) -> list[dict[str, Any]]:
    """A stream's events as stored (`type` and data), straight from PostgreSQL."""
    with psycopg.connect(database_url, autocommit=True) as conn:
        found = conn.execute(
            "SELECT type, data::text FROM events WHERE stream_id = %s ORDER BY stream_version",
            (stream,),
        ).fetchall()
    return [{"type": kind, **json.loads(data)} for kind, data in found]


def wait_for(read: Any, done: Any) -> Any:
    deadline = time.monotonic() + WAIT
    while True:
        body = read()
        if done(body):
            return body
        assert time.monotonic() < deadline, f"still {body}"
        time.sleep(0.05)


class Tournament:
    """A duplicate Basketball tournament of two rounds: four register, one sets a seed, one
    withdraws, so three play at one table of two with a bye; every event type is in it."""

    def __init__(self, http: httpx.Client) -> None:
        self.http = http
        body = {
            "name": "Declared",
            "variant": "basketball",
            "table_size": 2,
            "rounds": 2,
            "duplicate": True,
        }
        opened = http.post("/tournaments", json=body).json()
        self.id = opened["tournament_id"]
        self.auth = {"Authorization": f"Bearer {opened['organiser_token']}"}
        self.tokens: dict[str, str] = {}
        for name in ("Ann", "Bob", "Cy", "Di"):
            added = http.post(
                f"/tournaments/{self.id}/players", json={"name": name}, headers=self.auth
            )
            assert added.status_code == 201, added.text
            self.tokens[name] = added.json()["token"]
        seeded = http.put(
            f"/tournaments/{self.id}/players/Cy/seed",
            json={"seed": "three dice"},
            headers={"Authorization": f"Bearer {self.tokens['Cy']}"},
        )
        assert seeded.status_code == 200, seeded.text
        left = http.post(f"/tournaments/{self.id}/players/Di/withdraw", headers=self.auth)
        assert left.status_code == 200, left.text

    def events(self) -> list[dict[str, Any]]:
        page = self.http.get(f"/tournaments/{self.id}/events")
        assert page.status_code == 200, page.text
        assert not errors(page.json(), "TournamentFeed"), errors(page.json(), "TournamentFeed")
        return [entry["event"] for entry in page.json()["events"]]

    def play(self) -> list[str]:
        """Both rounds to the end; the games played."""
        games = []
        for number in (1, 2):
            started = self.http.post(f"/tournaments/{self.id}/rounds", headers=self.auth)
            assert started.status_code == 201, started.text
            (table,) = started.json()["tables"]
            play_over_http(self.http, table["game_id"], self.tokens, seed=number)
            games.append(table["game_id"])
            wait_for(
                lambda: self.http.get(f"/tournaments/{self.id}").json()["played"],
                lambda played, n=number: len(played) == n and played[-1]["state"] == "closed",
            )
        return games


@pytest.fixture(scope="module")
def tournament(api_base: str) -> Iterator[Tournament]:
    with httpx.Client(base_url=api_base, timeout=20) as http:
        yield Tournament(http)


def as_served(event: dict[str, Any], ended: bool) -> dict[str, Any]:
    """A stored event as the feed shows it: its token hash left out, the seed secret null
    until the tournament has ended."""
    shown = {key: value for key, value in event.items() if key != HIDDEN.get(event["type"])}
    if event["type"] == "tournament.created" and not ended:
        shown["seed_secret"] = None
    return shown


def test_a_tournaments_events_are_its_stored_events_as_the_typed_union_declares(
    tournament: Tournament, database_url: str
) -> None:
    before = tournament.events()
    assert before == [
        as_served(e, False) for e in stored(database_url, f"tournament:{tournament.id}")
    ]
    tournament.play()
    after = tournament.events()
    assert after == [
        as_served(e, True) for e in stored(database_url, f"tournament:{tournament.id}")
    ]
    assert before[0]["seed_secret"] is None
    assert len(after[0]["seed_secret"]) == 64
    mapping = DOCUMENT["components"]["schemas"]["TournamentEntry"]["properties"]["event"][
        "discriminator"
    ]["mapping"]
    assert {event["type"] for event in after} == set(mapping)
    for event in after:
        member = mapping[event["type"]].rsplit("/", 1)[-1]
        assert not errors(event, member), (event, errors(event, member))
        others = [m.rsplit("/", 1)[-1] for t, m in mapping.items() if t != event["type"]]
        assert all(errors(event, other) for other in others), event


def declared(path: str, method: str = "get", status: str = "200") -> set[str]:
    return set(DOCUMENT["paths"][path][method]["responses"][status]["content"])


def media_type(response: httpx.Response) -> str:
    return response.headers["content-type"].split(";")[0].strip()


def test_every_csv_and_ndjson_answer_has_a_declared_media_type(
    tournament: Tournament,
) -> None:
    http = tournament.http
    if tournament.events()[-1]["type"] != "tournament.ended":
        tournament.play()
    game = http.get(f"/tournaments/{tournament.id}").json()["played"][0]["tables"][0]["game_id"]
    standings = f"/tournaments/{tournament.id}/standings"
    wait_for(lambda: http.get(standings), lambda r: r.status_code == 200 and r.json()["ended"])
    answers = {
        ("/tournaments/{tournament_id}/standings", "text/csv"): http.get(
            standings, headers={"Accept": "text/csv"}
        ),
        ("/tournaments/{tournament_id}/standings", "application/json"): http.get(standings),
        ("/tournaments/{tournament_id}/standings/stream", "application/x-ndjson"): http.get(
            f"{standings}/stream"
        ),
        ("/games/{game_id}/export", "application/x-ndjson"): http.get(
            f"/games/{game}/export", headers={"Accept": "application/x-ndjson"}
        ),
        ("/games/{game_id}/export", "application/json"): http.get(f"/games/{game}/export"),
    }
    for (path, wanted), response in answers.items():
        assert response.status_code == 200, (path, response.text)
        assert media_type(response) == wanted, (path, response.headers["content-type"])
        assert wanted in declared(path), f"{path} answers {wanted}, which the document omits"
    csv = answers[("/tournaments/{tournament_id}/standings", "text/csv")].text
    example = DOCUMENT["paths"]["/tournaments/{tournament_id}/standings"]["get"]["responses"][
        "200"
    ]["content"]["text/csv"]["example"]
    assert csv.splitlines()[0] == example.splitlines()[0], "the example's header is the served one"
