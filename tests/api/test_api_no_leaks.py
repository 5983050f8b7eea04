"""The leak test: random games over HTTP; after every action, every endpoint as every viewer
(the audit, replay and export endpoints and the feed's chain fields included).
No response may carry a card identity that its viewer may not know.

The oracle is independent of the service: it folds the events read straight from PostgreSQL
and asks the rules (not the view code) what each viewer may know.
"""

from __future__ import annotations

import random
from collections import Counter
from collections.abc import Callable, Iterator
from contextlib import ExitStack, contextmanager
from typing import Any

import httpx
import psycopg
import pytest

from domain.cards import is_card
from domain.fairness import check_deals
from domain.variants import fold
from events.codec import default_codec
from events.schema.common import GameStarted, HandDealt, HandEnded
from events.schema.grid import CardDrawn, CardsPeeked, LayoutsRevealed
from events.schema.lobby import GameCreated, SeatClaimed, SeatSeedSet, SeedChainExtended
from tests.api.players import Table, concrete, open_table
from tests.api.sse import Stream
from tests.property.test_grid_properties import knowable as grid_knowable
from tests.property.test_shedding_properties import known_to as shedding_knowable

pytestmark = pytest.mark.api

CODEC = default_codec()


def true_state(database_url: str, game_id: str) -> Any:
    with psycopg.connect(database_url, autocommit=True) as conn:
        rows = conn.execute(
            "SELECT type, schema_version, data::text FROM events WHERE stream_id = %s "
            "ORDER BY stream_version",
            (f"game:{game_id}",),
        ).fetchall()
    events = [CODEC.decode(kind, version, data) for kind, version, data in rows]
    started = next(i for i, e in enumerate(events) if isinstance(e, GameStarted))
    return fold(events[started:])


def chain_secrets(database_url: str, game_id: str) -> list[str]:
    """What no response may hold before the game is over: each seed chain's secret (it
    reveals every server seed to come), read straight from PostgreSQL."""
    with psycopg.connect(database_url, autocommit=True) as conn:
        rows = conn.execute(
            "SELECT coalesce(data->>'seed_secret', data->>'secret') FROM events "
            "WHERE stream_id = %s AND type IN ('game.created', 'seed_chain.extended')",
            (f"game:{game_id}",),
        ).fetchall()
    return [secret for (secret,) in rows if secret]


def cards_in(value: Any) -> Counter[str]:
    found: Counter[str] = Counter()
    stack = [value]
    while stack:
        item = stack.pop()
        if isinstance(item, str) and is_card(item):
            found[item] += 1
        elif isinstance(item, list):
            stack.extend(item)
        elif isinstance(item, dict):
            stack.extend(item.values())
    return found


def live_secrets_in_feed(
    entries: list[dict[str, Any]], viewer: int | None, hand_live: int | None
) -> list[str]:
    """Event fields of the live hand that must be blank for this viewer."""
    bad = []
    hand = 0
    for entry in entries:
        event = entry["event"]
        if event["type"] == "hand.dealt":
            hand = event["hand"]
        if hand != hand_live:
            continue
        if event["type"] == "hand.dealt" and (event["seed"] or event["server_seed"]):
            bad.append(f"v{entry['version']}: the live hand's seed")
        if (
            event["type"] == "card.drawn"
            and event["source"] == "stock"
            and event["seat"] != viewer
            and event.get("card")
        ):
            bad.append(f"v{entry['version']}: seat {event['seat']}'s card from the stock")
        if event["type"] == "cards.peeked" and event["seat"] != viewer and event.get("cards"):
            bad.append(f"v{entry['version']}: seat {event['seat']}'s peeked cards")
    return bad


def stored_events(database_url: str, game_id: str) -> list[Any]:
    with psycopg.connect(database_url, autocommit=True) as conn:
        rows = conn.execute(
            "SELECT type, schema_version, data::text FROM events WHERE stream_id = %s "
            "ORDER BY stream_version",
            (f"game:{game_id}",),
        ).fetchall()
    return [CODEC.decode(kind, version, data) for kind, version, data in rows]


def hidden_from(event: Any, viewer: int | None, over: bool) -> bool:
    """Whether the stored event holds something `viewer` may not know (the rules, not the
    service's redaction): a live hand's seed, another seat's card from the stock or peeked
    cards, a seed chain's secret before the game is over."""
    match event:
        case HandDealt():
            return not over
        case CardDrawn(source="stock", seat=seat) | CardsPeeked(seat=seat):
            return not over and seat != viewer
        case LayoutsRevealed():
            return False
        case GameCreated() | SeedChainExtended():
            return True  # token hashes and the chain's secret stay off the feed's details
    return False


def chain_fields_of_hidden_events(
    entries: list[dict[str, Any]], stored: list[Any], viewer: int | None
) -> list[str]:
    """An event the viewer may not know whole shows no event id, time or metadata (with
    them its hash would give a hidden card away in 52 tries), and no hash unless its hidden
    part is a 256-bit secret (the lobby's token hashes, a seed chain's secret)."""
    bad = []
    ended = {e.hand for e in stored if isinstance(e, HandEnded)}
    hand = 0
    for entry in entries:
        event = stored[entry["version"] - 1]
        hand = event.hand if isinstance(event, HandDealt) else hand
        if not hidden_from(event, viewer, hand in ended):
            continue
        shown = [k for k in ("event_id", "recorded_at", "metadata") if entry[k] is not None]
        lobby = isinstance(event, GameCreated | SeatClaimed | SeedChainExtended)
        if entry["hash"] is not None and not lobby:
            shown.append("hash")
        after = next((e for e in entries if e["version"] == entry["version"] + 1), None)
        if after is not None and after["prev_hash"] is not None and not lobby:
            shown.append("the next entry's prev_hash")
        if shown:
            bad.append(f"v{entry['version']} ({type(event).__name__}): {shown}")
    return bad


def check_audit_endpoints(
    http: httpx.Client,
    table: Table,
    hand: int,
    live: bool,
    public: Counter[str],
    secrets: list[str],
) -> None:
    """The audit states public facts only; a live hand is neither replayed nor exported,
    and the replay of the hand before it holds nothing of it."""
    audit = http.get(f"/games/{table.game_id}/audit")
    assert audit.status_code == 200
    assert audit.json()["ok"] is True, audit.json()["failures"]
    assert not cards_in(audit.json()) - public, "the audit names a card"
    responses = [audit]
    if live:
        assert audit.json()["chain"]["head_hash"] is None, "the last event's hash, in play"
        replay = http.get(f"/games/{table.game_id}/hands/{hand}/replay")
        assert replay.status_code == 409
        export = http.get(f"/games/{table.game_id}/export")
        assert export.status_code == 409
        for response in (replay, export):
            assert not cards_in(response.json()) - public
        responses += [replay, export]
        if hand > 1:
            before = http.get(f"/games/{table.game_id}/hands/{hand - 1}/replay")
            assert before.status_code == 200
            assert all(step["event"]["type"] != "hand.dealt" for step in before.json()["steps"][1:])
            responses.append(before)
    for response in responses:
        for secret in secrets:
            assert secret not in response.text, "a live seed or a seed chain's secret"


def check_every_endpoint(
    http: httpx.Client,
    table: Table,
    database_url: str,
    last_action: httpx.Response | None,
    actor: int | None,
    streams: dict[int | None, Stream],
) -> None:
    decider, state = true_state(database_url, table.game_id)
    status = decider.status(state)
    live = status.phase in ("setup", "playing")
    seed = getattr(getattr(state, "round", None), "seed", None) or getattr(state, "seed", None)
    server_seed = getattr(getattr(state, "round", None), "server_seed", None) or getattr(
        state, "server_seed", None
    )
    secrets = [] if status.phase == "game_over" else chain_secrets(database_url, table.game_id)
    assert secrets or status.phase == "game_over", "a live game has a chain secret to keep"
    if live and server_seed:
        secrets.append(server_seed)
    if live and seed:
        secrets.append(seed)
    oracle: Callable[[Any, int | None], Counter[str]] = (
        shedding_knowable if decider.name == "tens-shedding" else grid_knowable
    )
    viewers: list[int | None] = [None, *range(len(table.tokens))]
    for viewer in viewers:
        headers = {} if viewer is None else table.auth(viewer)
        known = oracle(state, viewer)
        responses: list[httpx.Response] = []
        if viewer is None:
            view = http.get(f"/games/{table.game_id}/view")
        else:
            view = http.get(f"/games/{table.game_id}/me", headers=headers)
        assert view.status_code == 200
        body = view.json()
        actions = body.pop("legal_actions", [])
        shown = cards_in(body)
        assert not shown - known, f"viewer {viewer} was shown {shown - known}"
        assert set(cards_in(actions)) <= set(known), f"viewer {viewer}'s actions name cards"
        responses.append(view)

        feed = http.get(f"/games/{table.game_id}/events", params={"limit": 1000}, headers=headers)
        assert feed.status_code == 200
        if live:
            bad = live_secrets_in_feed(feed.json()["events"], viewer, status.hand)
            assert not bad, f"viewer {viewer}: {bad}"
            stored = stored_events(database_url, table.game_id)  # read after the feed
            bad = chain_fields_of_hidden_events(feed.json()["events"], stored, viewer)
            assert not bad, f"viewer {viewer}: {bad}"
        responses.append(feed)

        # The live stream, opened before the first action: every event it has sent so far.
        stream = streams[viewer]
        version = feed.json()["version"]
        streamed = stream.wait_for(version)
        assert [e["version"] for e in streamed] == list(range(1, version + 1))
        if live:
            bad = live_secrets_in_feed(streamed, viewer, status.hand)
            assert not bad, f"viewer {viewer}'s stream: {bad}"
            if seed:
                assert all(seed not in m.data for m in stream.messages), "the stream sent the seed"

        for path in ("", "/scores"):
            plain = http.get(f"/games/{table.game_id}{path}", headers=headers)
            assert plain.status_code == 200
            assert not cards_in(plain.json()), f"{path or '/games/{id}'} shows cards"
            responses.append(plain)
        lobby = http.get("/games", params={"limit": 200}, headers=headers)  # the lobby
        assert lobby.status_code == 200
        mine = [g for g in lobby.json()["games"] if g["game_id"] == table.game_id]
        assert not cards_in(mine), "the lobby shows cards"
        assert not [t for t in (table.creator, *table.tokens) if t in lobby.text]
        responses.append(lobby)
        responses += read_models(http, table, status.hand, live)
        responses.append(http.get("/.well-known/fairway-receipt-key"))
        # about every other action's version (an action may append two events a time, so
        # `% 4 == 0` alone could miss every version of a game: it did once in tens-shedding)
        if viewer is not None and status.phase != "game_over" and body["version"] % 4 < 2:
            seeded = http.put(
                f"/games/{table.game_id}/seats/{viewer}/seed",
                json={"seed": f"seat {viewer} at v{body['version']}"},
                headers=headers,
            )
            assert seeded.status_code == 200 or seeded.json()["code"] == "too_many_seeds"
            assert not cards_in(seeded.json())
            responses.append(seeded)
        for response in responses:
            for secret in secrets:
                assert secret not in response.text, f"viewer {viewer} saw a secret seed"
    live_secrets = [x for x in (seed, server_seed) if x and live] + secrets
    check_audit_endpoints(http, table, status.hand, live, oracle(state, None), live_secrets)
    if last_action is not None and live:
        answer = last_action.json()
        bad = live_secrets_in_feed(answer["events"], actor, status.hand)
        assert not bad, f"action response: {bad}"
        known = oracle(state, actor)
        shown = cards_in(answer["view"])
        assert not shown - known, f"the action's answer showed seat {actor} {shown - known}"
        assert set(cards_in(answer["legal_actions"])) <= set(known)
        for secret in secrets:
            assert secret not in last_action.text, "the action's answer holds a secret seed"


@contextmanager
def streams_of(api_base: str, table: Table) -> Iterator[dict[int | None, Stream]]:
    """A live event stream for every viewer: the spectator and each seat."""
    with ExitStack() as stack:
        streams: dict[int | None, Stream] = {}
        for viewer in [None, *range(len(table.tokens))]:
            headers = {} if viewer is None else table.auth(viewer)
            path = f"/games/{table.game_id}/stream"
            streams[viewer] = stack.enter_context(Stream(api_base, path, headers=headers))
        yield streams


def read_models(http: httpx.Client, table: Table, hand: int, live: bool) -> list[httpx.Response]:
    """The read models' answers (the same for every viewer): the scoreboard and each
    player's record hold no card at all; a replay is served only for a hand that is over,
    and the live hand's is refused whole."""
    responses = []
    board = http.get(f"/games/{table.game_id}/scoreboard")
    assert board.status_code in (200, 503)  # 503: the projector has not reached the game yet
    if board.status_code == 200:
        assert not cards_in(board.json()), "the scoreboard shows cards"
        responses.append(board)
    for seat in range(len(table.tokens)):
        player = http.get(f"/players/bot {seat}", params={"limit": 3})
        assert player.status_code in (200, 404, 503)
        assert not cards_in(player.json()), "a player's record shows cards"
        responses.append(player)
    if live and hand >= 1:
        replay = http.get(f"/games/{table.game_id}/hands/{hand}/replay")
        assert replay.status_code == 409, "a hand in play was replayed"
        assert not cards_in(replay.json())
        responses.append(replay)
    return responses


@pytest.mark.parametrize(
    ("variant", "seats", "options"),
    [
        ("hang-ten", 4, {"hands": 1, "turn_limit": 6}),
        ("tens", 2, {"turn_limit": 6}),
        ("golf", 3, {"hands": 1, "turn_limit": 8}),
        ("basketball", 3, {}),
        ("tens-shedding", 2, {"turn_limit": 40}),
    ],
)
def test_no_response_to_any_viewer_holds_a_card_it_may_not_know(
    http: httpx.Client,
    api_base: str,
    database_url: str,
    variant: str,
    seats: int,
    options: dict[str, Any],
) -> None:
    table = open_table(http, variant, seats, options)
    with streams_of(api_base, table) as streams:
        play_and_check(http, table, database_url, streams, variant)


def play_and_check(
    http: httpx.Client,
    table: Table,
    database_url: str,
    streams: dict[int | None, Stream],
    variant: str,
) -> None:
    rng = random.Random(variant)
    check_every_endpoint(http, table, database_url, None, None, streams)
    for _ in range(400):
        status = table.public()["status"]
        if status["phase"] == "game_over":
            break
        seat = rng.choice(status["to_act"])
        legal = table.me(seat)["legal_actions"]
        response = table.act(seat, concrete(rng.choice(legal), rng))
        assert response.status_code == 200, response.text
        check_every_endpoint(http, table, database_url, response, seat, streams)
    assert table.public()["status"]["phase"] == "game_over"
    # Seeds were set by every seat at every step: every deal used the ones the events show.
    with psycopg.connect(database_url, autocommit=True) as conn:
        rows = conn.execute(
            "SELECT stream_version, type, schema_version, data::text FROM events "
            "WHERE stream_id = %s ORDER BY stream_version",
            (f"game:{table.game_id}",),
        ).fetchall()
    events = [(v, CODEC.decode(kind, schema, data)) for v, kind, schema, data in rows]
    assert any(isinstance(e, SeatSeedSet) for _, e in events)
    assert check_deals(events) == []
