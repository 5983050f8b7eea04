"""The limits per client: who a connection counts for, which connection gives way when room
is needed, one client's share of the connection cap, and its stream slots."""

from __future__ import annotations

from typing import Any

import pytest

from service.http.connections import client_share
from service.http.holdings import Holdings
from service.http.middleware import CLIENT, ClientAddresses, StreamSlots

pytestmark = pytest.mark.unit


def test_a_client_holds_three_quarters_of_the_cap_at_most() -> None:
    assert client_share(256, 4096) == 256
    assert client_share(256, 200) == 150
    assert client_share(256, 1) == 1


def test_a_connection_counts_for_its_peer_unless_the_peer_is_a_trusted_proxy() -> None:
    assert ClientAddresses().peer("203.0.113.9") == "203.0.113.9"
    behind = ClientAddresses(["10.0.0.0/8"])
    assert behind.peer("10.1.2.3") is None, "a proxy's requests each name their client"
    assert behind.peer("203.0.113.9") == "203.0.113.9"
    assert behind.peer("2001:db8:1:2::7") == "2001:db8:1:2::/64"


def test_the_connection_idle_longest_gives_way_first_of_all_or_of_one_client() -> None:
    held: Holdings[str] = Holdings()
    for connection, client in [("a1", "a"), ("b1", "b"), ("a2", "a")]:
        held.hold(connection, client)
        held.rest(connection)
    assert held.idle_longest() == "a1"
    held.busy("a1")
    assert held.idle_longest() == "b1"
    assert held.idle_longest_of("a") == "a2"
    held.rest("a1")  # a request ended: now the one idle the shortest
    assert held.idle_longest_of("a") == "a2"
    assert (len(held), held.count("a"), held.count("b")) == (3, 2, 1)


def test_the_hog_is_the_client_holding_at_least_two_more_than_the_newcomer() -> None:
    held: Holdings[str] = Holdings()
    for n in range(3):
        held.hold(f"h{n}", "hog")
    held.hold("o1", "other")
    assert held.hog(newcomer="new") == "hog"
    assert held.hog(newcomer="other") == "hog", "3 against 1: it comes to 2 against 2"
    held.hold("o2", "other")
    assert held.hog(newcomer="other") is None, "3 against 2: it would come to 2 against 3"
    assert held.newest_first("hog") == ["h2", "h1", "h0"]
    for connection in ("h2", "h1", "o2"):
        held.release(connection)
    assert held.hog(newcomer="new") is None, "1 against 0: it would come to 0 against 1"


def test_a_connection_of_a_proxy_counts_for_the_client_of_its_latest_request() -> None:
    held: Holdings[str] = Holdings()
    held.hold("p", None)
    held.rest("p")
    assert held.hog(newcomer="new") is None, "nobody holds a proxy's fresh connection"
    held.hold("p", "198.51.100.1")
    assert held.count("198.51.100.1") == 1
    assert held.idle_longest_of("198.51.100.1") == "p", "idle as it was"
    held.hold("p", "198.51.100.2")
    assert (held.count("198.51.100.1"), held.count("198.51.100.2")) == (0, 1)
    held.release("p")
    assert (len(held), held.idle_longest()) == (0, None)


def test_a_client_takes_its_stream_slots_and_gets_each_back_once() -> None:
    slots = StreamSlots(per_client=2)
    scopes: list[Any] = [{CLIENT: "a"} for _ in range(3)]
    assert [slots.take(scope) for scope in scopes] == [True, True, False]
    assert slots.take({CLIENT: "b"})
    slots.give_back(scopes[2])  # refused: held nothing
    assert not slots.take({CLIENT: "a"})
    slots.give_back(scopes[0])
    slots.give_back(scopes[0])  # a second give-back frees nothing more
    assert slots.take({CLIENT: "a"})
    assert not slots.take({CLIENT: "a"})
