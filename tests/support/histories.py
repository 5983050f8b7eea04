"""Whole games as the service stores them, without a server: bots play, each action's
events and the deal that follows carry the action in their metadata (as service/play/games.py
appends them), and every row gets its chain hash. For the audit's and export's tests and the
export benchmark."""

from __future__ import annotations

import hashlib
import random
import uuid
from datetime import UTC, datetime, timedelta
from typing import Any

import msgspec

from domain.seed_chain import new_chain
from domain.shuffle import derive_seed
from domain.variants import bot, decider_for
from events.codec import GENESIS_HASH, canonical_bytes, chain_hash, default_codec
from events.schema.common import Act, DealHand, GameOptions, GameStarted
from events.schema.lobby import GameCreated, SeatClaimed
from events.stored import StoredRow
from service.play.record import ACTION


def played(
    variant: str,
    players: int,
    seed: int = 0,
    options: GameOptions | None = None,
    kind: str = "random",
    v1: bool = False,
) -> tuple[list[tuple[Any, dict[str, Any]]], list[Any]]:
    """A finished game's (event, metadata) pairs from game.created on, and the states
    folded live after each of them (None before game.started). Deals are v2 (a seed chain
    committed at creation, the seats' names as their seeds) unless `v1`."""
    options = options or GameOptions()
    rng = random.Random(seed)
    master = seed.to_bytes(8, "big")
    decider = decider_for(variant)
    bots = [bot(kind, variant) for _ in range(players)]
    state = decider.initial_state(players, options)
    chain = new_chain(hashlib.sha256(master).digest(), 1, getattr(state, "hands", None) or 1000)
    created = GameCreated(variant, players, options, "00" * 32, "")
    if not v1:
        created = msgspec.structs.replace(
            created, seed_anchor=chain.anchor, seed_hands=chain.hands, seed_secret=chain.secret
        )
    stored: list[tuple[Any, dict[str, Any]]] = [(created, {})]
    stored += [(SeatClaimed(s, f"p{s}", "11" * 32), {"seat": s}) for s in range(players)]
    states: list[Any] = [None] * len(stored)
    batch: list[Any] = [GameStarted(variant, players, options)]
    metadata: dict[str, Any] = {}
    while True:
        status = decider.status(state)
        if status.phase == "awaiting_deal":
            hand = status.hand + 1
            deal = (
                DealHand(derive_seed(master, hand).hex())
                if v1
                else DealHand(
                    server_seed=chain.server_seed(hand).hex(),
                    seat_seeds=tuple(f"p{s}" for s in range(players)),
                )
            )
            batch += list(decider.decide(state, deal))
        for event in batch:
            if not isinstance(event, GameStarted):
                state = decider.evolve(state, event)
            stored.append((event, metadata))
            states.append(state)
        if decider.status(state).phase == "game_over":
            return stored, states
        if batch and decider.status(state).phase == "awaiting_deal":
            batch = []
            continue
        status = decider.status(state)
        seat = status.to_act[rng.randrange(len(status.to_act))]
        legal = decider.legal_actions(state, seat)
        action = decider.pick(bots[seat].choose(decider.view(state, seat), legal, rng), rng)
        metadata = {"seat": seat, ACTION: msgspec.to_builtins(action)}
        batch = list(decider.decide(state, Act(seat, action)))


def rows(game_id: str, stored: list[tuple[Any, dict[str, Any]]]) -> list[StoredRow]:
    """The rows a store would hold for these events, hashes chained."""
    codec = default_codec()
    prev = GENESIS_HASH
    out = []
    start = datetime(2026, 11, 23, tzinfo=UTC)
    for version, (event, metadata) in enumerate(stored, start=1):
        encoded = codec.encode(event)
        meta = codec.encode_metadata(metadata)
        event_id = str(uuid.uuid5(uuid.NAMESPACE_URL, f"{game_id}/{version}"))
        prev = chain_hash(
            prev,
            canonical_bytes(
                f"game:{game_id}",
                version,
                event_id,
                encoded.type,
                encoded.schema_version,
                encoded.data,
                meta,
            ),
        )
        out.append(
            StoredRow(
                version,
                event_id,
                encoded.type,
                encoded.schema_version,
                encoded.data.decode(),
                meta.decode(),
                start + timedelta(seconds=version),
                prev,
            )
        )
    return out
