"""Every stored event type and every action, by family. Pure: no I/O."""

from events.schema import common, grid, lobby, shedding, tournament

EVENT_TYPES: tuple[type, ...] = (
    *lobby.EVENTS,
    common.GameStarted,
    common.HandDealt,
    common.HandEnded,
    common.GameEnded,
    *grid.EVENTS,
    *shedding.EVENTS,
    *tournament.EVENTS,
)

__all__ = ["EVENT_TYPES", "common", "grid", "lobby", "shedding", "tournament"]
