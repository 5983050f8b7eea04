"""Instances on one database, none with a configured receipt key: each signs with the key it
made in its own data directory, registers it in the database as it starts, and accepts every
registered key. A receipt from either checks through the other's audit; each lists both keys;
a key never registered proves nothing (issue 17, item 5)."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import msgspec
import pytest

from events.migrate import migrate
from service.contract.receipts import Receipt, ReceiptKey, from_b64url, sign, verify_receipt
from tests.api.players import Table, open_table
from tests.api.server import instance_settings, running_server
from tests.support.services import throwaway_database

pytestmark = pytest.mark.api


@pytest.fixture(scope="module")
def keys_database(postgres_server_url: str) -> Iterator[str]:
    """A database of this module's own, so that its registry holds only these instances'."""
    with throwaway_database(postgres_server_url, "fairway_keys") as url:
        migrate(url)
        yield url


@pytest.fixture(scope="module")
def instances(
    keys_database: str, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[tuple[httpx.Client, httpx.Client]]:
    root = tmp_path_factory.mktemp("instances")
    with (
        running_server(instance_settings(keys_database, root / "a")) as a,
        running_server(instance_settings(keys_database, root / "b")) as b,
        httpx.Client(base_url=a, timeout=20) as one,
        httpx.Client(base_url=b, timeout=20) as two,
    ):
        yield one, two


def key_info(http: httpx.Client) -> dict[str, Any]:
    answer = http.get("/.well-known/fairway-receipt-key")
    assert answer.status_code == 200, answer.text
    return answer.json()  # type: ignore[no-any-return]


def listed(http: httpx.Client) -> dict[str, bytes]:
    """The installation's keys as the instance lists them: key id -> public key."""
    return {k["key_id"]: from_b64url(k["public_key"]) for k in key_info(http)["keys"]}


def act(table: Table, **headers: str) -> dict[str, Any]:
    """The first legal action of a seat to act; the answer's receipt."""
    seat = table.public()["status"]["to_act"][0]
    action = table.me(seat)["legal_actions"][0]
    answer = table.act(seat, action, **headers)
    assert answer.status_code == 200, answer.text
    return answer.json()["receipt"]  # type: ignore[no-any-return]


def audited(http: httpx.Client, game_id: str, receipts: list[Any]) -> list[dict[str, Any]]:
    answer = http.post(f"/games/{game_id}/audit", json={"receipts": receipts})
    assert answer.status_code == 200, answer.text
    return answer.json()["receipts"]  # type: ignore[no-any-return]


def test_each_instance_signs_with_its_own_key_and_lists_both(
    instances: tuple[httpx.Client, httpx.Client],
) -> None:
    one, two = instances
    first, second = key_info(one), key_info(two)
    assert first["key_id"] != second["key_id"], "no key configured: each made its own"
    assert first["retired"] == second["retired"] == []
    both = {first["key_id"]: first["public_key"], second["key_id"]: second["public_key"]}
    for info in (first, second):
        # Both, whichever started first; a newcomer's too once one has joined (below).
        assert both.items() <= {k["key_id"]: k["public_key"] for k in info["keys"]}.items()
        assert all(k["first_seen"] for k in info["keys"])
    assert first["keys"] == second["keys"], "one registry, one list, first seen first"


def test_a_receipt_from_either_instance_checks_through_the_others_audit(
    instances: tuple[httpx.Client, httpx.Client],
) -> None:
    one, two = instances
    table = open_table(one, "golf", 2, {"hands": 1})
    on_two = Table(two, table.game_id, table.creator, table.tokens)
    seat = table.public()["status"]["to_act"][0]
    action = table.me(seat)["legal_actions"][0]
    retry = {"Idempotency-Key": "retried-on-the-other-instance"}
    answers = [table.act(seat, action, **retry), on_two.act(seat, action, **retry)]
    assert [a.status_code for a in answers] == [200, 200], [a.text for a in answers]
    # The client's retry landed on the other instance: the same version and hash, signed
    # with the other instance's key.
    signed_by_one, retried = (a.json()["receipt"] for a in answers)
    signed_by_two = act(on_two)
    assert signed_by_one["key_id"] == key_info(one)["key_id"]
    assert retried["key_id"] == signed_by_two["key_id"] == key_info(two)["key_id"]
    assert (retried["version"], retried["hash"]) == (
        signed_by_one["version"],
        signed_by_one["hash"],
    )
    everything = [signed_by_one, retried, signed_by_two]
    for http in (one, two):
        results = audited(http, table.game_id, everything)
        assert [r["ok"] for r in results] == [True, True, True], results
        keys = listed(http)
        for receipt in everything:
            held = msgspec.convert(receipt, Receipt)
            assert verify_receipt(held, keys[held.key_id])


def test_a_receipt_signed_by_a_key_never_registered_proves_nothing(
    instances: tuple[httpx.Client, httpx.Client],
) -> None:
    one, two = instances
    table = open_table(one, "golf", 2, {"hands": 1})
    genuine = msgspec.convert(act(table), Receipt)
    stranger = ReceiptKey.generate()
    forged = sign(stranger, genuine.game_id, genuine.version, bytes.fromhex(genuine.hash))
    for http in (one, two):
        assert stranger.key_id not in listed(http)
        (result,) = audited(http, table.game_id, [msgspec.to_builtins(forged)])
        assert not result["ok"]
        assert result["detail"] == f"signed by key {stranger.key_id}, which is not a known key"


def test_an_instance_that_joins_later_is_accepted_by_those_already_running(
    instances: tuple[httpx.Client, httpx.Client], keys_database: str, tmp_path: Path
) -> None:
    one, two = instances
    with (
        running_server(instance_settings(keys_database, tmp_path / "c")) as c,
        httpx.Client(base_url=c, timeout=20) as newcomer,
    ):
        table = open_table(newcomer, "golf", 2, {"hands": 1})
        receipt = act(table)
        assert receipt["key_id"] == key_info(newcomer)["key_id"]
        assert set(listed(newcomer)) >= set(listed(one)) | {receipt["key_id"]}
    for http in (one, two):
        assert receipt["key_id"] in listed(http)
        assert [r["ok"] for r in audited(http, table.game_id, [receipt])] == [True]
