"""Who holds the connections of one server, and which one gives way when room is needed.

Each connection counts for one client, named by the rules of the rate limiter
(service/http/middleware.py, `ClientAddresses`): its peer when it opens, or, behind a trusted
proxy, the client its latest request came from (nobody until then). Connections with no
request in progress are idle, kept in the order they fell idle. The connection protocol
(service/http/connections.py) asks here which connection to close.
"""

from __future__ import annotations

from collections.abc import Hashable
from dataclasses import dataclass, field
from typing import Generic, TypeVar

C = TypeVar("C", bound=Hashable)


@dataclass(slots=True, eq=False)
class Holding(Generic[C]):
    """One client's connections, oldest first, and its idle ones, idle longest first."""

    connections: dict[C, None] = field(default_factory=dict)
    idle: dict[C, None] = field(default_factory=dict)


class Holdings(Generic[C]):
    def __init__(self) -> None:
        self.idle: dict[C, None] = {}
        """Every idle connection, idle longest first."""
        self._clients: dict[str | None, Holding[C]] = {}
        self._holder: dict[C, str | None] = {}

    def __len__(self) -> int:
        return len(self._holder)

    def hold(self, connection: C, client: str | None) -> None:
        """`connection` counts for `client` (None: nobody yet) from now on, idle or not as
        it was; a new one counts as busy."""
        if connection in self._holder:
            if self._holder[connection] == client:
                return
            was_idle = connection in self.idle
            self.release(connection)
        else:
            was_idle = False
        self._holder[connection] = client
        self._clients.setdefault(client, Holding()).connections[connection] = None
        if was_idle:
            self.rest(connection)

    def release(self, connection: C) -> None:
        """Forget `connection` (closed); nothing if it was never held."""
        if connection not in self._holder:
            return
        client = self._holder.pop(connection)
        self.idle.pop(connection, None)
        holding = self._clients[client]
        del holding.connections[connection]
        holding.idle.pop(connection, None)
        if not holding.connections:
            del self._clients[client]

    def rest(self, connection: C) -> None:
        """`connection` has no request in progress: it is now the one idle the shortest."""
        if connection not in self._holder:
            return
        holding = self._clients[self._holder[connection]]
        for idle in (self.idle, holding.idle):
            idle.pop(connection, None)
            idle[connection] = None

    def busy(self, connection: C) -> None:
        """A request is in progress on `connection`."""
        self.idle.pop(connection, None)
        if connection in self._holder:
            self._clients[self._holder[connection]].idle.pop(connection, None)

    def count(self, client: str | None) -> int:
        holding = self._clients.get(client)
        return 0 if holding is None else len(holding.connections)

    def idle_longest(self) -> C | None:
        """The connection idle the longest."""
        return next(iter(self.idle), None)

    def idle_longest_of(self, client: str) -> C | None:
        """The connection of `client` idle the longest."""
        holding = self._clients.get(client)
        return None if holding is None else next(iter(holding.idle), None)

    def hog(self, newcomer: str | None) -> str | None:
        """The client holding the most connections, if it holds at least two more than
        `newcomer`: one of them may go so that the newcomer gets one, and the hog still
        holds no fewer than the newcomer."""
        counts = (
            (len(holding.connections), client)
            for client, holding in self._clients.items()
            if client is not None
        )
        most, hog = max(counts, default=(0, None))
        return hog if most > self.count(newcomer) + 1 else None

    def newest_first(self, client: str) -> list[C]:
        holding = self._clients.get(client)
        return [] if holding is None else list(reversed(holding.connections))
