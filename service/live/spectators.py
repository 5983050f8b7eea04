"""What a spectator may see of a game: all of it, or the game some seat actions ago.

With a delay of N actions (FAIRWAY_SPECTATOR_DELAY, as Lichess delays live games) a
spectator sees the game as of the version just before the N-th most recent seat action, so
that nobody can watch a live table and tell a player what the others just did. An action's
events and the deal appended with it count as one action. Once the game is over, everything
is shown. Seats are never delayed.

Every spectator read path asks `horizon` for the version to show, so none of them runs ahead
of another: the summary, the public view, the event feed, the scores and the event stream
from the record (`DuplicateGate.visible`, which adds the duplicate gate's limit); the
scoreboard, the replay and the audit, which do not start from the record, through
`DuplicateGate.held_now`; the lobby from its read model, which counts seat actions by the
same rule (`projections.lobby.as_seen`). tests/api/test_api_spectator_delay.py lists every
route and sweeps those that show a game. The delayed state is the same for every
spectator: it is folded once per horizon, forward from the last one, and kept on the record.
"""

from __future__ import annotations

from typing import Any

from domain.decider import Status, Viewer
from service.play.record import GameRecord


def horizon(record: GameRecord, delay: int) -> int:
    """The last version a spectator may see now."""
    starts = record.action_starts
    if delay <= 0 or record.finished or not starts:
        return record.version
    return starts[max(0, len(starts) - delay)] - 1


def visible_version(record: GameRecord, viewer: Viewer, delay: int) -> int:
    """The last version `viewer` may see: a seat sees everything, a spectator the horizon."""
    return record.version if viewer is not None else horizon(record, delay)


def state_at(record: GameRecord, version: int) -> Any:
    """The play state just after `version` (a horizon), folded forward from the one folded
    for the previous horizon when it lies on the way, else from the start."""
    if version >= record.version:
        return record.state
    memo = record.spectator_memo
    decider = record.decider
    if memo is not None and decider is not None and memo[1] is not None and memo[0] <= version:
        state = memo[1]
        for entry in record.entries[memo[0] : version]:
            state = decider.evolve(state, entry.event)
    else:
        state = record.state_at(version)
    record.spectator_memo = (version, state)
    return state


def status_at(record: GameRecord, version: int) -> Status | None:
    decider = record.decider
    return None if decider is None else decider.status(state_at(record, version))
