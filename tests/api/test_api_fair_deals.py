"""Deals no single party controls, and signed receipts, over real HTTP and PostgreSQL.

The stored events are read straight from PostgreSQL and checked by `domain/fairness.py`:
the seed chain is committed in the game's first event, before any seat exists; every seat
seed a deal used was set after that and before the deal; every revealed seed re-derives.
"""

from __future__ import annotations

import base64
import hashlib
import hmac
import random
import threading
from collections.abc import Iterator
from typing import Any

import httpx
import msgspec
import psycopg
import pytest

from domain.fairness import check_deals
from domain.shuffle import SHUFFLE_V2, hand_seed_message
from events.codec import default_codec
from events.schema.common import HandDealt, HandEnded
from events.schema.lobby import GameCreated, SeatSeedSet, SeedChainExtended
from service.contract.receipts import Receipt, ReceiptKey, b64url, from_b64url, sign, verify_receipt
from service.ops.settings import Settings
from tests.api.players import Table, open_table, play_step
from tests.api.server import running_server

pytestmark = pytest.mark.api

CODEC = default_codec()


def stored_events(database_url: str, game_id: str) -> list[tuple[int, Any]]:
    with psycopg.connect(database_url, autocommit=True) as conn:
        rows = conn.execute(
            "SELECT stream_version, type, schema_version, data::text FROM events "
            "WHERE stream_id = %s ORDER BY stream_version",
            (f"game:{game_id}",),
        ).fetchall()
    return [(version, CODEC.decode(kind, schema, data)) for version, kind, schema, data in rows]


def stored_hash(database_url: str, game_id: str, version: int) -> str:
    with psycopg.connect(database_url, autocommit=True) as conn:
        row = conn.execute(
            "SELECT hash FROM events WHERE stream_id = %s AND stream_version = %s",
            (f"game:{game_id}", version),
        ).fetchone()
    assert row is not None
    return bytes(row[0]).hex()


def set_seed(table: Table, seat: int, seed: Any, token_of: int | None = None) -> httpx.Response:
    token = table.tokens[seat if token_of is None else token_of]
    return table.http.put(
        f"/games/{table.game_id}/seats/{seat}/seed",
        json={"seed": seed},
        headers={"Authorization": f"Bearer {token}"},
    )


def open_unstarted(http: httpx.Client, variant: str, seats: int, options: dict[str, Any]) -> Table:
    created = http.post("/games", json={"variant": variant, "seats": seats, "options": options})
    created.raise_for_status()
    table = Table(http, created.json()["game_id"], created.json()["creator_token"])
    for seat in range(seats):
        claimed = http.post(f"/games/{table.game_id}/seats", json={"name": f"Seat {seat}"})
        table.tokens.append(claimed.json()["token"])
    return table


def start(table: Table) -> None:
    table.http.post(
        f"/games/{table.game_id}/start", headers={"Authorization": f"Bearer {table.creator}"}
    ).raise_for_status()


def play_until(table: Table, rng: random.Random, hand: int | None = None) -> None:
    """Play until `hand` is dealt (None: until the game is over)."""
    for _ in range(5000):
        status = table.public()["status"]
        if status["phase"] == "game_over" or (hand is not None and status["hand"] >= hand):
            return
        assert play_step(table, rng)
    raise AssertionError("the game did not get there")


def server_key(http: httpx.Client) -> bytes:
    answer = http.get("/.well-known/fairway-receipt-key")
    assert answer.status_code == 200
    body = answer.json()
    assert body["algorithm"] == "Ed25519"
    key = from_b64url(body["public_key"])
    assert body["key_id"] == hashlib.sha256(key).hexdigest()[:16]
    return key


# ---- the order of commitments and seeds ------------------------------------------------


def test_the_stored_order_shows_no_server_seed_was_chosen_after_a_seat_seed(
    http: httpx.Client, database_url: str
) -> None:
    table = open_unstarted(http, "golf", 3, {"hands": 3, "turn_limit": 5})
    assert set_seed(table, 0, "set in the lobby").status_code == 200
    start(table)
    rng = random.Random(3)
    play_step(table, rng)
    assert set_seed(table, 1, "set during hand 1").status_code == 200
    play_until(table, rng, hand=2)
    assert set_seed(table, 0, "first, during hand 2").status_code == 200
    assert set_seed(table, 0, "then changed, during hand 2").status_code == 200
    play_until(table, rng)

    events = stored_events(database_url, table.game_id)
    assert check_deals(events) == []
    created = events[0][1]
    assert isinstance(created, GameCreated)
    assert created.seed_hands == 3
    assert all(version > 1 for version, e in events if isinstance(e, SeatSeedSet))
    deals = {e.hand: (v, e) for v, e in events if isinstance(e, HandDealt)}
    assert all(e.shuffle == SHUFFLE_V2 for _, e in deals.values())
    assert deals[1][1].seat_seeds == ("set in the lobby", "Seat 1", "Seat 2")
    assert deals[2][1].seat_seeds == ("set in the lobby", "set during hand 1", "Seat 2")
    assert deals[3][1].seat_seeds[:2] == ("then changed, during hand 2", "set during hand 1")
    # Each seed a deal used was stored after the commitment (v1) and before that deal.
    for version, event in events:
        if isinstance(event, SeatSeedSet):
            used = [h for h, (v, d) in deals.items() if v > version and event.seed in d.seat_seeds]
            assert all(deals[h][0] > version > 1 for h in used)


def test_a_seat_seed_changes_the_next_deal_and_only_from_the_next_hand(
    http: httpx.Client, database_url: str
) -> None:
    table = open_table(http, "tens", 2, {"hands": 2, "turn_limit": 3})
    rng = random.Random(5)
    play_step(table, rng)
    before = stored_events(database_url, table.game_id)
    hand_one = next(e for _, e in before if isinstance(e, HandDealt))
    assert set_seed(table, 1, "mine from hand 2 on").status_code == 200
    after = stored_events(database_url, table.game_id)
    assert [e for _, e in after if isinstance(e, HandDealt)] == [hand_one]
    play_until(table, rng)

    events = stored_events(database_url, table.game_id)
    ended = {e.hand: e for _, e in events if isinstance(e, HandEnded)}
    two = next(e for _, e in events if isinstance(e, HandDealt) and e.hand == 2)
    assert two.seat_seeds == ("bot 0", "mine from hand 2 on")
    server = bytes.fromhex(ended[2].server_seed)

    def derived(seats: list[str]) -> str:
        return hmac.new(server, hand_seed_message(2, seats), hashlib.sha256).hexdigest()

    assert ended[2].seed == derived(["bot 0", "mine from hand 2 on"])
    assert ended[2].seed != derived(["bot 0", "bot 1"])
    assert hashlib.sha256(server).hexdigest() == two.commitment == ended[1].server_seed


# ---- bad requests store nothing --------------------------------------------------------


@pytest.mark.parametrize(
    ("body", "why", "status", "code"),
    [
        (b'{"seed": ""}', "empty", 422, "invalid_request"),
        (b'{"seed": "' + b"x" * 129 + b'"}', "129 characters", 422, "invalid_request"),
        (b'{"seed": "line\\nbreak"}', "a control character", 422, "invalid_request"),
        ('{"seed": "bidi\u202e"}'.encode(), "a format character", 422, "invalid_request"),
        ('{"seed": "\ue000"}'.encode(), "a private-use character", 422, "invalid_request"),
        (b'{"seed": 12345}', "not a string", 422, "invalid_request"),
        (b'{"seed": null}', "null", 422, "invalid_request"),
        (b'{"seed": "ok", "extra": 1}', "an unknown field", 422, "invalid_request"),
        (b"{}", "no seed", 422, "invalid_request"),
        (b'{"seed": "\\ud800"}', "a lone surrogate", 400, "malformed_request"),
        (b'{"seed": "cut', "cut short", 400, "malformed_request"),
        (b'"just a string"', "not an object", 422, "invalid_request"),
    ],
)
def test_a_bad_seed_is_refused_and_nothing_is_stored(
    http: httpx.Client, database_url: str, body: bytes, why: str, status: int, code: str
) -> None:
    table = open_unstarted(http, "golf", 2, {"hands": 1})
    count = len(stored_events(database_url, table.game_id))
    answer = http.put(
        f"/games/{table.game_id}/seats/0/seed",
        content=body,
        headers=table.auth(0) | {"Content-Type": "application/json"},
    )
    assert (answer.status_code, answer.json()["code"]) == (status, code), why
    assert answer.headers["content-type"].startswith("application/problem+json")
    assert len(stored_events(database_url, table.game_id)) == count


def test_wrong_tokens_and_closed_games_get_problems_and_nothing_is_stored(
    http: httpx.Client, database_url: str
) -> None:
    table = open_unstarted(http, "golf", 2, {"hands": 1, "turn_limit": 3})
    url = f"/games/{table.game_id}/seats/1/seed"
    count = len(stored_events(database_url, table.game_id))
    cases = [
        (http.put(url, json={"seed": "s"}), 401, "token_required"),
        (
            http.put(url, json={"seed": "s"}, headers={"Authorization": "Bearer nope"}),
            401,
            "invalid_token",
        ),
        (
            http.put(url, json={"seed": "s"}, headers={"Authorization": f"Bearer {table.creator}"}),
            401,
            "invalid_token",
        ),
        (set_seed(table, 1, "s", token_of=0), 403, "not_your_seat"),
        (
            http.put(
                f"/games/{table.game_id}/seats/7/seed", json={"seed": "s"}, headers=table.auth(0)
            ),
            403,
            "not_your_seat",
        ),
        (
            http.put(
                "/games/00000000000000ff/seats/0/seed", json={"seed": "s"}, headers=table.auth(0)
            ),
            404,
            "game_not_found",
        ),
    ]
    for answer, status, code in cases:
        assert (answer.status_code, answer.json()["code"]) == (status, code), answer.text
    assert len(stored_events(database_url, table.game_id)) == count

    start(table)
    play_until(table, random.Random(1))
    over = len(stored_events(database_url, table.game_id))
    refused = set_seed(table, 0, "too late")
    assert (refused.status_code, refused.json()["code"]) == (409, "game_over")
    assert len(stored_events(database_url, table.game_id)) == over


def test_a_seat_sets_its_seed_at_most_16_times_between_two_deals(
    http: httpx.Client, database_url: str
) -> None:
    table = open_unstarted(http, "tens", 2, {"hands": 2, "turn_limit": 2})
    for n in range(16):
        assert set_seed(table, 0, f"try {n}").status_code == 200
    count = len(stored_events(database_url, table.game_id))
    refused = set_seed(table, 0, "one more")
    assert (refused.status_code, refused.json()["code"]) == (409, "too_many_seeds")
    assert len(stored_events(database_url, table.game_id)) == count
    assert set_seed(table, 1, "the other seat is not held back").status_code == 200
    start(table)
    assert set_seed(table, 0, "a new hand, a new allowance").status_code == 200
    events = stored_events(database_url, table.game_id)
    dealt = next(e for _, e in events if isinstance(e, HandDealt))
    assert dealt.seat_seeds == ("try 15", "the other seat is not held back")


def test_a_seat_freed_and_claimed_again_starts_without_the_old_holder_s_seed(
    http: httpx.Client, database_url: str
) -> None:
    table = open_unstarted(http, "golf", 2, {"hands": 1, "turn_limit": 2})
    assert set_seed(table, 1, "the first holder's").status_code == 200
    http.delete(f"/games/{table.game_id}/seats/1", headers=table.auth(1)).raise_for_status()
    claimed = http.post(f"/games/{table.game_id}/seats", json={"name": "Second"})
    table.tokens[1] = claimed.json()["token"]
    start(table)
    events = stored_events(database_url, table.game_id)
    dealt = next(e for _, e in events if isinstance(e, HandDealt))
    assert dealt.seat_seeds == ("Seat 0", "Second")
    assert check_deals(events) == []


def test_a_name_that_could_not_be_a_set_seed_still_stands_in_for_one(
    http: httpx.Client, database_url: str
) -> None:
    """Names allow characters seeds do not (a no-break space, a soft hyphen): the deal goes
    on."""
    created = http.post("/games", json={"variant": "golf", "seats": 2, "options": {"hands": 1}})
    game_id, creator = created.json()["game_id"], created.json()["creator_token"]
    names = ["no-break\u00a0space", "soft\u00adhyphen"]
    for name in names:
        assert http.post(f"/games/{game_id}/seats", json={"name": name}).status_code == 201
    started = http.post(f"/games/{game_id}/start", headers={"Authorization": f"Bearer {creator}"})
    assert started.status_code == 200, started.text
    events = stored_events(database_url, game_id)
    dealt = next(e for _, e in events if isinstance(e, HandDealt))
    assert list(dealt.seat_seeds) == names
    assert check_deals(events) == []


# ---- receipts ----------------------------------------------------------------------------


def test_every_answer_to_an_action_carries_a_receipt_the_served_key_verifies(
    http: httpx.Client, database_url: str
) -> None:
    key = server_key(http)
    table = open_table(http, "golf", 2, {"hands": 1, "turn_limit": 3})
    rng = random.Random(2)
    seat = table.public()["status"]["to_act"][0]
    action = table.me(seat)["legal_actions"][0]
    answer = table.act(seat, action)
    assert answer.status_code == 200
    receipt = msgspec.convert(answer.json()["receipt"], Receipt)
    assert receipt.game_id == table.game_id
    assert receipt.version == answer.json()["version"]
    assert receipt.hash == stored_hash(database_url, table.game_id, receipt.version)
    assert verify_receipt(receipt, key)
    for change in ({"version": receipt.version - 1}, {"hash": "00" * 32}, {"game_id": "x"}):
        assert not verify_receipt(msgspec.structs.replace(receipt, **change), key)

    seeded = set_seed(table, seat, "receipted")
    assert verify_receipt(msgspec.convert(seeded.json()["receipt"], Receipt), key)
    claimed = http.post("/games", json={"variant": "golf", "seats": 2}).json()["game_id"]
    seat_answer = http.post(f"/games/{claimed}/seats", json={"name": "Ada"}).json()
    assert verify_receipt(msgspec.convert(seat_answer["receipt"], Receipt), key)
    while play_step(table, rng):
        pass


def test_create_claim_release_and_start_answer_with_receipts_and_reads_without(
    http: httpx.Client, database_url: str
) -> None:
    key = server_key(http)
    created = http.post("/games", json={"variant": "golf", "seats": 2, "options": {"hands": 1}})
    game_id = created.json()["game_id"]
    answers = [created.json()]
    auth = {"Authorization": f"Bearer {created.json()['creator_token']}"}
    answers.append(http.post(f"/games/{game_id}/seats", json={"name": "A"}).json())
    answers.append(http.post(f"/games/{game_id}/seats", json={"name": "B"}).json())
    answers.append(http.delete(f"/games/{game_id}/seats/1", headers=auth).json())
    answers.append(http.post(f"/games/{game_id}/seats", json={"name": "C"}).json())
    answers.append(http.post(f"/games/{game_id}/start", headers=auth).json())
    for body in answers:
        receipt = msgspec.convert(body["receipt"], Receipt)
        assert receipt.version == body["version"]
        assert receipt.hash == stored_hash(database_url, game_id, receipt.version)
        assert verify_receipt(receipt, key)
    assert [a["version"] for a in answers] == [1, 2, 3, 4, 5, 7]
    assert http.get(f"/games/{game_id}").json()["receipt"] is None


def test_an_idempotent_retry_carries_the_same_receipt(http: httpx.Client) -> None:
    table = open_table(http, "golf", 2, {"hands": 1})
    seat = table.public()["status"]["to_act"][0]
    action = table.me(seat)["legal_actions"][0]
    headers = {"Idempotency-Key": "receipt-retry-1"}
    first = table.act(seat, action, **headers)
    assert play_step(table, random.Random(4))  # the game moves on
    again = table.act(seat, action, **headers)
    assert first.status_code == again.status_code == 200
    assert first.json()["receipt"] == again.json()["receipt"]
    assert again.json()["receipt"]["version"] < table.public()["version"]

    seed_headers = table.auth(seat) | {"Idempotency-Key": "seed-retry-1"}
    url = f"/games/{table.game_id}/seats/{seat}/seed"
    one = http.put(url, json={"seed": "same"}, headers=seed_headers)
    two = http.put(url, json={"seed": "same"}, headers=seed_headers)
    assert one.json() == two.json()
    reused = http.put(url, json={"seed": "different"}, headers=seed_headers)
    assert (reused.status_code, reused.json()["code"]) == (422, "idempotency_key_reused")


# ---- a game that outlasts its chain --------------------------------------------------------


@pytest.fixture(scope="module")
def short_chains(api_settings: Settings) -> Iterator[httpx.Client]:
    settings = msgspec.structs.replace(api_settings, seed_chain_hands=1)
    with running_server(settings) as base, httpx.Client(base_url=base, timeout=20) as client:
        yield client


def test_a_game_that_outlasts_its_chain_commits_the_next_and_stays_verifiable(
    short_chains: httpx.Client, database_url: str
) -> None:
    table = open_table(short_chains, "tens", 2, {"turn_limit": 2})
    rng = random.Random(11)
    feed = short_chains.get(f"/games/{table.game_id}/events").json()["events"]
    extension = next(e["event"] for e in feed if e["event"]["type"] == "seed_chain.extended")
    assert extension["first_hand"] == 2
    assert extension["secret"] is None, "the chain's secret is hidden while the game goes on"
    assert feed[0]["event"]["seed_secret"] is None
    play_until(table, rng, hand=2)
    assert set_seed(table, 0, "after the extension").status_code == 200
    play_until(table, rng)

    events = stored_events(database_url, table.game_id)
    assert check_deals(events) == []
    chains = [e for _, e in events if isinstance(e, SeedChainExtended)]
    assert len(chains) >= 2
    feed = short_chains.get(f"/games/{table.game_id}/events", params={"limit": 1000}).json()[
        "events"
    ]
    assert feed[0]["event"]["seed_secret"] == events[0][1].seed_secret
    revealed = [e["event"]["secret"] for e in feed if e["event"]["type"] == "seed_chain.extended"]
    assert revealed == [c.secret for c in chains]


def test_seeds_set_while_others_play_land_in_the_deals_the_stored_order_says(
    api_base: str, database_url: str
) -> None:
    """Two clients at once: one plays, one keeps changing seat 0's seed. Whichever lands
    first is decided first (the expected version on append), so every deal used exactly the
    seeds stored before it."""
    with (
        httpx.Client(base_url=api_base, timeout=20) as player,
        httpx.Client(base_url=api_base, timeout=20) as seeder,
    ):
        table = open_table(player, "tens", 2, {"hands": 4, "turn_limit": 2})
        done = threading.Event()
        statuses: list[int] = []

        def keep_seeding() -> None:
            n = 0
            while not done.is_set() and n < 200:
                answer = seeder.put(
                    f"/games/{table.game_id}/seats/0/seed",
                    json={"seed": f"seed {n}"},
                    headers=table.auth(0),
                )
                statuses.append(answer.status_code)
                n += 1

        thread = threading.Thread(target=keep_seeding)
        thread.start()
        try:
            play_until(table, random.Random(9))
        finally:
            done.set()
            thread.join(timeout=30)
    events = stored_events(database_url, table.game_id)
    assert set(statuses) <= {200, 409}
    assert statuses.count(200) >= 2
    used = {e.seat_seeds[0] for _, e in events if isinstance(e, HandDealt)}
    assert any(seed.startswith("seed ") for seed in used)
    assert check_deals(events) == []


def test_two_instances_with_one_configured_key_give_one_receipt_for_a_retry(
    api_settings: Settings,
) -> None:
    """FAIRWAY_RECEIPT_KEY shared: an action taken through one instance and retried through
    another carries the same receipt, and both serve the same key."""
    shared = base64.b64encode(hashlib.sha256(b"a shared test key").digest()).decode()
    old = ReceiptKey.from_seed(hashlib.sha256(b"the key before").digest())
    settings = msgspec.structs.replace(
        api_settings, receipt_key=shared, receipt_retired_keys=(b64url(old.public_key),)
    )
    with (
        running_server(settings) as a,
        running_server(settings) as b,
        httpx.Client(base_url=a, timeout=20) as one,
        httpx.Client(base_url=b, timeout=20) as two,
    ):
        assert server_key(one) == server_key(two)
        retired = one.get("/.well-known/fairway-receipt-key").json()["retired"]
        assert retired == [{"key_id": old.key_id, "public_key": b64url(old.public_key)}]
        old_receipt = sign(old, "0123456789abcdef", 3, bytes(32))
        assert verify_receipt(old_receipt, from_b64url(retired[0]["public_key"]))
        table = open_table(one, "golf", 2, {"hands": 1})
        seat = table.public()["status"]["to_act"][0]
        action = table.me(seat)["legal_actions"][0]
        headers = table.auth(seat) | {"Idempotency-Key": "across-instances"}
        url = f"/games/{table.game_id}/actions"
        first = one.post(url, json=action, headers=headers)
        again = two.post(url, json=action, headers=headers)
        assert first.status_code == again.status_code == 200
        assert first.json()["receipt"] == again.json()["receipt"]
        receipt = msgspec.convert(again.json()["receipt"], Receipt)
        assert verify_receipt(receipt, server_key(two))


def test_the_chain_secret_is_in_no_lobby_answer_and_in_the_feed_once_the_game_is_over(
    http: httpx.Client, database_url: str
) -> None:
    """The walk of test_api_no_leaks covers play; this covers the lobby's answers too."""
    created = http.post(
        "/games",
        json={"variant": "tens", "seats": 2, "options": {"hands": 2, "turn_limit": 2}},
    )
    game_id, creator = created.json()["game_id"], created.json()["creator_token"]
    secret = stored_events(database_url, game_id)[0][1].seed_secret
    assert len(secret) == 64
    table = Table(http, game_id, creator)
    answers = [created]
    for name in ("A", "B", "C"):
        claimed = http.post(f"/games/{game_id}/seats", json={"name": name})
        answers.append(claimed)
        if name == "B":
            answers.append(
                http.delete(
                    f"/games/{game_id}/seats/1", headers={"Authorization": f"Bearer {creator}"}
                )
            )
        else:
            table.tokens.append(claimed.json()["token"])
    answers.append(set_seed(table, 0, "lobby"))
    answers.append(
        http.post(f"/games/{game_id}/start", headers={"Authorization": f"Bearer {creator}"})
    )
    for path in ("", "/view", "/events?limit=1000", "/scores"):
        answers.append(http.get(f"/games/{game_id}{path}"))
        answers.append(http.get(f"/games/{game_id}{path}", headers=table.auth(0)))
    answers.append(http.get(f"/games/{game_id}/me", headers=table.auth(1)))
    assert all(a.status_code in (200, 201) for a in answers), [a.text for a in answers]
    for answer in answers:
        assert secret not in answer.text
    play_until(table, random.Random(8))
    feed = http.get(f"/games/{game_id}/events", params={"limit": 1000}).json()["events"]
    assert feed[0]["event"]["seed_secret"] == secret
