"""Whole games as the service stores them, played in-process: a seed chain committed in
`game.created`, seats claimed, seat seeds set at chosen moments, v2 deals, bots' actions.

An independent model of what `service/play/games.py` appends, for the pure tests of
`domain/fairness.py`; the API tests check the service itself against the same checker.
"""

from __future__ import annotations

import hashlib
import random
from collections.abc import Mapping
from typing import Any

from domain.bots.base import RandomBot
from domain.seed_chain import SeedChain, new_chain
from domain.variants import decider_for
from events.schema.common import Act, DealHand, GameOptions, GameStarted
from events.schema.lobby import GameCreated, SeatClaimed, SeatSeedSet, SeedChainExtended

Seeds = Mapping[int, Mapping[int, str]]
"""Hand number -> {seat: seed}: set just before that hand is dealt (1: in the lobby)."""


def play(
    variant: str,
    players: int,
    options: GameOptions | None = None,
    *,
    seeds: Seeds | None = None,
    chain_hands: int = 1000,
    game: int = 0,
    max_steps: int = 20_000,
) -> list[tuple[int, Any]]:
    """The (version, event) pairs of one finished game."""
    options = options or GameOptions()
    seeds = seeds or {}
    rng = random.Random(game)
    decider = decider_for(variant)
    state = decider.initial_state(players, options)
    fixed = getattr(state, "hands", None)
    chains = [new_chain(_secret(game, 0), 1, fixed or chain_hands)]
    events: list[Any] = [
        GameCreated(
            variant, players, options, "", "", chains[0].anchor, chains[0].hands, chains[0].secret
        )
    ]
    names = [f"player {seat}" for seat in range(players)]
    held: list[str | None] = [None] * players
    events += [SeatClaimed(seat, names[seat], "") for seat in range(players)]
    events.append(GameStarted(variant, players, options))
    bot = RandomBot()
    for _ in range(max_steps):
        status = decider.status(state)
        if status.phase == "game_over":
            return list(enumerate(events, start=1))
        if status.phase == "awaiting_deal":
            hand = status.hand + 1
            for seat, seed in (seeds.get(hand) or {}).items():
                events.append(SeatSeedSet(seat, seed))
                held[seat] = seed
            chain = _covering(chains, hand)
            command = DealHand(
                server_seed=chain.server_seed(hand).hex(),
                seat_seeds=tuple(
                    s if s is not None else n for s, n in zip(held, names, strict=True)
                ),
            )
            new = list(decider.decide(state, command))
            if hand == chain.last_hand and fixed is None:
                following = new_chain(_secret(game, len(chains)), hand + 1, chain_hands)
                chains.append(following)
                new.append(
                    SeedChainExtended(hand + 1, chain_hands, following.anchor, following.secret)
                )
                held = [None] * players
        else:
            seat = status.to_act[rng.randrange(len(status.to_act))]
            legal = decider.legal_actions(state, seat)
            choice = bot.choose(decider.view(state, seat), legal, rng)
            new = list(decider.decide(state, Act(seat, decider.pick(choice, rng))))
        for event in new:
            state = decider.evolve(state, event)
        events += new
    raise AssertionError("the game did not end")


def _secret(game: int, chain: int) -> bytes:
    return hashlib.sha256(f"test secret {game} {chain}".encode()).digest()


def _covering(chains: list[SeedChain], hand: int) -> SeedChain:
    return next(chain for chain in chains if chain.covers(hand))
