"""The tournament service on both real stores: a whole duplicate tournament played by bots
through the players' tokens, rounds closed by the round keeper, Swiss seating from the
standings, identical deals across a duplicate round, withdrawals, raced starts."""

from __future__ import annotations

import asyncio

import pytest

from domain.errors import RuleViolation
from domain.tournament.standings import round_mean, standings
from domain.tournament.state import fold
from events.schema.common import HandDealt
from events.schema.lobby import SeatResigned
from events.schema.tournament import RoundClosed, RoundStarted, TournamentEnded
from events.store import EventStore
from service.contract.problems import ApiError
from service.ops.metrics import Metrics
from service.play.games import GameService
from service.tournaments.record import stream_id
from service.tournaments.rounds import RoundKeeper
from service.tournaments.service import TournamentService
from tests.support.tournaments import play_out, tournament_spec

pytestmark = pytest.mark.integration

WAIT = 30.0


async def opened(
    store: EventStore, players: int, **changes: object
) -> tuple[TournamentService, str, str, dict[str, str]]:
    service = TournamentService(store, GameService(store, Metrics()), Metrics())
    record, organiser = await service.create(tournament_spec(**changes), None)
    tokens = {}
    for i in range(players):
        name = f"player {i:02}"
        _, tokens[name] = await service.register(record.tournament_id, organiser, name)
    return service, record.tournament_id, organiser, tokens


async def stored(store: EventStore, stream: str) -> list[object]:
    return [item.data for item in await store.read_stream(stream)]


async def test_a_duplicate_swiss_tournament_plays_out_and_its_rounds_close_by_themselves(
    store: EventStore,
) -> None:
    service, tid, organiser, tokens = await opened(store, 9)
    keeper = RoundKeeper(store, service, idle_check=0.5)
    keeper.start()
    try:
        for number in (1, 2):
            outcome = await service.start_round(tid, organiser)
            started = outcome.record.state.rounds[-1].started
            assert started.round == number
            assert (len(started.tables), len(started.byes)) == (2, 1)
            seated = [p for t in started.tables for p in t.players] + list(started.byes)
            assert sorted(seated) == sorted(tokens), "each player seated once or on a bye"
            # Every table's game: created, seated with the players' names, started.
            peers = tuple(t.game_id for t in started.tables)
            dealt = []
            for table in started.tables:
                game = await service.games.load(table.game_id)
                assert tuple(game.lobby.names) == table.players
                assert game.started
                assert game.lobby.peers == peers
                assert game.lobby.tournament == tid
                dealt.append(next(e for e in await stored(store, f"game:{table.game_id}")
                                  if isinstance(e, HandDealt)))  # fmt: skip
            assert len({(d.seed, d.server_seed, d.seat_seeds) for d in dealt}) == 1, (
                "a duplicate round deals every table the same cards"
            )
            for i, table in enumerate(started.tables):
                await play_out(service.games, table.game_id, tokens, seed=10 * number + i)
            await wait_closed(service, tid, number)
    finally:
        await keeper.stop()

    events = await stored(store, stream_id(tid))
    assert isinstance(events[-1], TournamentEnded)
    state = fold(events)
    closed = [r.closed for r in state.rounds]
    assert all(isinstance(c, RoundClosed) for c in closed)
    first = closed[0]
    assert first is not None
    # Round 1's results are the games' own, and the byes score the round's mean.
    for result in first.results:
        game = await service.games.load(result.game_id)
        assert result.totals == game.status().totals  # type: ignore[union-attr]
    totals = [x for r in first.results for x in r.totals]
    assert first.bye_score == round_mean(totals)
    # Round 2 is seated by the standings after round 1, best first, and gives its bye to
    # someone who had none.
    rows = standings(list(tokens), state.results(up_to=1), high_wins=False)
    second = state.rounds[1].started
    ranked = [row.player for row in rows if row.player not in second.byes]
    assert [p for t in second.tables for p in t.players] == ranked
    assert set(second.byes).isdisjoint(state.rounds[0].started.byes)
    # The round's seed is revealed, and links to the anchor committed at creation.
    assert first.server_seed == state.chain().server_seed(1).hex()


async def wait_closed(service: TournamentService, tid: str, number: int) -> None:
    async def closed() -> None:
        while True:
            state = (await service.load(tid)).state
            if len(state.rounds) >= number and state.rounds[number - 1].closed is not None:
                return
            await asyncio.sleep(0.05)

    await asyncio.wait_for(closed(), WAIT)


async def test_a_round_whose_games_ended_while_no_keeper_ran_closes_when_one_starts(
    store: EventStore,
) -> None:
    service, tid, organiser, tokens = await opened(store, 4, rounds=1)
    started = (await service.start_round(tid, organiser)).record.state.rounds[-1].started
    await play_out(service.games, started.tables[0].game_id, tokens, seed=7)
    assert (await service.load(tid)).state.open_round is not None, "nobody closed it yet"
    keeper = RoundKeeper(store, TournamentService(store, GameService(store, Metrics()), Metrics()))
    keeper.start()
    try:
        await wait_closed(service, tid, 1)
    finally:
        await keeper.stop()
    events = await stored(store, stream_id(tid))
    assert [type(e) for e in events[-2:]] == [RoundClosed, TournamentEnded]


async def test_two_instances_close_a_round_once(store: EventStore) -> None:
    service, tid, organiser, tokens = await opened(store, 4, rounds=2)
    started = (await service.start_round(tid, organiser)).record.state.rounds[-1].started
    await play_out(service.games, started.tables[0].game_id, tokens, seed=8)
    other = TournamentService(store, GameService(store, Metrics()), Metrics())
    closed = await asyncio.gather(service.close_round(tid), other.close_round(tid))
    # At most one of them closed it: in the whole suite a third instance (the API tests'
    # server, with its round keeper, on the same database) may have closed it first.
    assert closed.count(True) <= 1
    events = await stored(store, stream_id(tid))
    assert sum(isinstance(e, RoundClosed) for e in events) == 1


async def test_a_raced_start_creates_one_set_of_games(store: EventStore) -> None:
    service, tid, organiser, _ = await opened(store, 8, duplicate=False)
    other = TournamentService(store, GameService(store, Metrics()), Metrics())
    results = await asyncio.gather(
        service.start_round(tid, organiser),
        other.start_round(tid, organiser),
        return_exceptions=True,
    )
    won = [r for r in results if not isinstance(r, BaseException)]
    lost = [r for r in results if isinstance(r, BaseException)]
    assert len(won) == 1
    assert all(isinstance(e, RuleViolation) and e.code == "round_in_play" for e in lost)
    events = await stored(store, stream_id(tid))
    assert sum(isinstance(e, RoundStarted) for e in events) == 1
    (started,) = [e for e in events if isinstance(e, RoundStarted)]
    for table in started.tables:
        game = await service.games.load(table.game_id)
        stored_events = await stored(store, f"game:{table.game_id}")
        assert (
            game.version
            == len(stored_events)
            == await store.stream_version(f"game:{table.game_id}")
        )
        assert sum(type(e).__name__ == "GameCreated" for e in stored_events) == 1
        assert tuple(game.lobby.names) == table.players


async def test_a_retried_start_with_its_key_gets_the_same_round(store: EventStore) -> None:
    service, tid, organiser, _ = await opened(store, 8)
    first = await service.start_round(tid, organiser, key="start-round-1-key")
    again = await service.start_round(tid, organiser, key="start-round-1-key")
    assert again.replayed
    assert again.first_version == first.first_version
    events = await stored(store, stream_id(tid))
    assert sum(isinstance(e, RoundStarted) for e in events) == 1


async def test_withdrawing_resigns_the_players_seats_in_the_round_in_play(
    store: EventStore,
) -> None:
    service, tid, organiser, tokens = await opened(store, 8)
    started = (await service.start_round(tid, organiser)).record.state.rounds[-1].started
    leaving = started.tables[1].players[2]
    outcome, resigned = await service.withdraw(tid, tokens[leaving], leaving)
    assert resigned == [started.tables[1].game_id]
    game_events = await stored(store, f"game:{started.tables[1].game_id}")
    assert game_events[-1] == SeatResigned(2, "withdrawn")
    with pytest.raises(ApiError) as refused:
        await service.games.act(started.tables[1].game_id, tokens[leaving], None)
    assert refused.value.code == "seat_resigned"
    # Withdrawn: no second withdrawal, no seed, never seated again.
    before = await stored(store, stream_id(tid))
    with pytest.raises(RuleViolation) as again:
        await service.withdraw(tid, organiser, leaving)
    assert again.value.code == "player_withdrawn"
    assert await stored(store, stream_id(tid)) == before
    assert leaving not in outcome.record.state.active()


async def test_a_player_of_a_duplicate_round_sets_no_game_level_seed(store: EventStore) -> None:
    service, tid, organiser, tokens = await opened(store, 4)
    started = (await service.start_round(tid, organiser)).record.state.rounds[-1].started
    table = started.tables[0]
    before = await stored(store, f"game:{table.game_id}")
    with pytest.raises(ApiError) as refused:
        await service.games.set_seed(table.game_id, tokens[table.players[0]], 0, "mine")
    assert (refused.value.status, refused.value.code) == (409, "duplicate_deals")
    assert await stored(store, f"game:{table.game_id}") == before


async def test_rounds_that_start_by_themselves_follow_each_close_once(store: EventStore) -> None:
    """Given a tournament whose rounds start by themselves, when round 1 (the organiser's
    to start) closes, then round 2 starts with no one asking, once however many instances
    try, and the tournament ends with its last round."""
    service, tid, organiser, tokens = await opened(store, 4, rounds=2, auto_rounds=True)
    assert not await service.advance(tid), "round 1 is the organiser's to start"
    first = (await service.start_round(tid, organiser)).record.state.rounds[-1].started
    await play_out(service.games, first.tables[0].game_id, tokens, seed=21)
    await service.close_round(tid)
    await wait_closed(service, tid, 1)
    other = TournamentService(store, GameService(store, Metrics()), Metrics())
    started = await asyncio.gather(service.advance(tid), other.advance(tid))
    assert started.count(True) <= 1  # the API tests' server may be a third instance
    state = (await service.load(tid)).state
    assert [r.number for r in state.rounds] == [1, 2]
    events = await stored(store, stream_id(tid))
    assert sum(isinstance(e, RoundStarted) for e in events) == 2
    keeper = RoundKeeper(store, service, idle_check=0.5)
    keeper.start()
    try:
        await play_out(service.games, state.rounds[1].started.tables[0].game_id, tokens, seed=22)
        await wait_closed(service, tid, 2)
    finally:
        await keeper.stop()
    assert (await service.load(tid)).state.ended
    assert not await service.advance(tid)
