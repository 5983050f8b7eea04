"""The one command path (service/commands/handler.py) on both real stores, for both kinds of
stream: a game (a cached record with its lock, caught up on demand) and a tournament (read
again for every command). The command sets a seat's or a player's seed; "another instance"
is a second service on the same store, with its own cache."""

from __future__ import annotations

import secrets
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import Any

import msgspec
import pytest

from domain.tournament import decide as rules
from events.schema.common import GameOptions
from events.schema.lobby import GameCreated
from events.store import EventStore
from service.commands.command import Actor, Command, Decision
from service.commands.handler import Handler
from service.commands.keys import Key
from service.commands.stream import Stream, load
from service.contract.problems import ApiError
from service.ops.metrics import Metrics
from service.play import moves
from service.play.games import GameService, stream_id
from service.play.lobby import token_hash
from service.tournaments.record import player
from service.tournaments.service import TournamentService, ruling
from tests.support.tournaments import tournament_spec

pytestmark = pytest.mark.integration

KEY = "a key of sixteen characters"
ONE_ROUND = tournament_spec(table_size=2, rounds=1, duplicate=False)


@dataclass
class Subject:
    """A stream and a command on it, as two instances see them."""

    streams: Stream[Any]
    name: str
    stream_id: str
    seed: Callable[[str], Command[Any]]
    """The command: set the seed to this."""
    other: Callable[[str], Awaitable[object]]
    """Another instance sets the seed (through its own service)."""
    elsewhere: Stream[Any]
    """The stream kind as the other instance holds it."""


@pytest.fixture(params=["game", "tournament"])
async def subject(request: pytest.FixtureRequest, store: EventStore) -> Subject:
    if request.param == "game":
        games, other = GameService(store, Metrics()), GameService(store, Metrics())
        record, _ = await games.create("golf", 2, GameOptions(hands=1), "commands")
        game_id = record.game_id
        _, _, token = await games.claim(game_id, 0, "ann")
        return Subject(
            games.streams,
            game_id,
            stream_id(game_id),
            lambda seed: moves.set_seed(token, 0, seed),
            lambda seed: other.set_seed(game_id, token, 0, seed),
            other.streams,
        )
    tournaments = TournamentService(store, GameService(store, Metrics()), Metrics())
    elsewhere = TournamentService(store, GameService(store, Metrics()), Metrics())
    record, organiser = await tournaments.create(ONE_ROUND, None)
    tournament_id = record.tournament_id
    _, token = await tournaments.register(tournament_id, organiser, "ann")
    return Subject(
        tournaments.streams,
        tournament_id,
        f"tournament:{tournament_id}",
        lambda seed: Command(player(token, "ann", False), ruling(rules.SetSeed("ann", seed))),
        lambda seed: elsewhere.set_seed(tournament_id, token, "ann", seed),
        elsewhere.streams,
    )


async def stored(store: EventStore, subject: Subject) -> list[tuple[int, object, str]]:
    """The stream as stored: each event's version, id and seed (if it sets one)."""
    rows = await store.read_stream(subject.stream_id)
    return [(row.version, row.event_id, getattr(row.data, "seed", "")) for row in rows]


def meddled(subject: Subject, times: int) -> tuple[Command[Any], list[int]]:
    """The command to set the seed to "mine", while another instance sets it first (between
    this one's decision and its append) on each of the first `times` attempts. Returns the
    command and the version each attempt was decided on."""
    command, attempts = subject.seed("mine"), []

    async def decide(record: Any, actor: Actor) -> Decision:
        attempts.append(record.version)
        if len(attempts) <= times:
            await subject.other(f"other {len(attempts)}")
        decision = command.decide(record, actor)
        assert isinstance(decision, Decision)
        return decision

    return Command(command.authorize, decide), attempts


async def test_a_replayed_key_returns_the_first_outcome_and_appends_nothing(
    store: EventStore, subject: Subject
) -> None:
    metrics = Metrics()
    handler = Handler(store, metrics)
    first = await handler.run(subject.streams, subject.name, subject.seed("one"), Key(KEY, "1"))
    before = await stored(store, subject)
    assert before[-1][2] == "one"
    again = await handler.run(subject.streams, subject.name, subject.seed("one"), Key(KEY, "1"))
    # A retry that reaches another instance finds the key in the stream, not in a cache.
    there = await Handler(store, Metrics()).run(
        subject.elsewhere, subject.name, subject.seed("one"), Key(KEY, "1")
    )
    assert not first.replayed
    for replayed in (again, there):
        assert replayed.replayed
        assert (replayed.first_version, replayed.last_version) == (
            first.first_version,
            first.last_version,
        )
    assert await stored(store, subject) == before
    assert metrics.counters["idempotent_replays"] == 1
    assert metrics.counters["commands"] == 1


async def test_a_key_used_for_another_request_is_refused_and_appends_nothing(
    store: EventStore, subject: Subject
) -> None:
    handler = Handler(store, Metrics())
    await handler.run(subject.streams, subject.name, subject.seed("one"), Key(KEY, "1"))
    before = await stored(store, subject)
    for streams in (subject.streams, subject.elsewhere):
        with pytest.raises(ApiError) as refused:
            await handler.run(streams, subject.name, subject.seed("two"), Key(KEY, "2"))
        assert (refused.value.status, refused.value.code) == (422, "idempotency_key_reused")
    assert await stored(store, subject) == before


async def test_a_conflict_is_decided_again_on_the_stream_as_it_now_stands(
    store: EventStore, subject: Subject
) -> None:
    metrics = Metrics()
    await load(subject.streams, subject.name)  # this instance holds the stream as it was
    before = await stored(store, subject)
    command, attempts = meddled(subject, times=1)
    outcome = await Handler(store, metrics).run(subject.streams, subject.name, command)
    version = before[-1][0]
    assert attempts == [version, version + 1]
    assert outcome.first_version == outcome.record.version == version + 2
    after = await stored(store, subject)
    assert after[: len(before)] == before
    assert [seed for _, _, seed in after[len(before) :]] == ["other 1", "mine"]
    assert metrics.counters["append_conflicts"] == 1


async def test_conflicts_past_the_bound_are_409_and_append_nothing_of_the_command(
    store: EventStore, subject: Subject
) -> None:
    metrics = Metrics()
    before = await stored(store, subject)
    command, attempts = meddled(subject, times=10)
    with pytest.raises(ApiError) as refused:
        await Handler(store, metrics, retries=3).run(subject.streams, subject.name, command)
    assert (refused.value.status, refused.value.code) == (409, "conflict")
    assert len(attempts) == 3
    assert metrics.counters["append_conflicts"] == 3
    after = await stored(store, subject)
    assert [seed for _, _, seed in after[len(before) :]] == ["other 1", "other 2", "other 3"]


async def test_a_command_run_once_is_never_retried(store: EventStore, subject: Subject) -> None:
    """As a turn played for a seat: the expected version decides between instances, and a
    conflict means another instance moved the stream first."""
    before = await stored(store, subject)
    command, attempts = meddled(subject, times=10)
    with pytest.raises(ApiError) as refused:
        await Handler(store, Metrics()).run(subject.streams, subject.name, command, once=True)
    assert (refused.value.status, refused.value.code) == (409, "conflict")
    assert len(attempts) == 1
    assert [seed for _, _, seed in (await stored(store, subject))[len(before) :]] == ["other 1"]


async def test_a_stale_expected_version_is_409_and_appends_nothing(
    store: EventStore, subject: Subject
) -> None:
    handler = Handler(store, Metrics())
    seen = (await load(subject.streams, subject.name)).version
    await subject.other("moved")
    moved = await stored(store, subject)
    with pytest.raises(ApiError) as refused:
        await handler.run(subject.streams, subject.name, subject.seed("late"), expected=seen)
    assert (refused.value.status, refused.value.code) == (409, "stale_version")
    assert (
        refused.value.detail
        == f"If-Match {seen} but the {subject.streams.noun} is at version {seen + 1}"
    )
    assert await stored(store, subject) == moved
    landed = await handler.run(
        subject.streams, subject.name, subject.seed("current"), expected=seen + 1
    )
    assert landed.first_version == seen + 2


async def test_a_refusal_on_a_cached_game_that_is_behind_is_not_final(store: EventStore) -> None:
    """This instance's record still shows a free seat; another instance has filled it:
    starting is refused on the record as cached, decided again on the game as it stands,
    and starts it."""
    here, there = GameService(store, Metrics()), GameService(store, Metrics())
    record, creator = await here.create("golf", 2, GameOptions(hands=1), "commands")
    await here.claim(record.game_id, 0, "ann")
    await there.claim(record.game_id, 1, "bob")
    cached = here.cache.get(record.game_id)
    assert cached is not None
    assert cached.record.lobby.free_seats() == [1]
    outcome = await here.start(record.game_id, creator)
    assert outcome.record.started
    assert outcome.record.lobby.names == ("ann", "bob")


async def test_a_retried_create_finds_the_stream_it_made(store: EventStore) -> None:
    """The ids derive from the request: an identical retry lands on the stored events, and
    another request under the same ids is given the stream as it was made, to compare."""
    game_id = secrets.token_hex(8)
    handler = Handler(store, Metrics())
    created = GameCreated("golf", 2, GameOptions(hands=1), token_hash("creator"), "made once")
    streams = GameService(store, Metrics()).streams
    made, ours = await handler.create(streams, game_id, [created], id_base="x")
    assert ours
    assert made.version == 1
    for title, same in (("made once", True), ("made twice", False)):
        retried = msgspec.structs.replace(created, title=title)
        elsewhere = GameService(store, Metrics()).streams
        found, ours = await handler.create(elsewhere, game_id, [retried], id_base="x")
        assert ours is same
        assert found.entries[0].event == created
    assert len(await store.read_stream(stream_id(game_id))) == 1
