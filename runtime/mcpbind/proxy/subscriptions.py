"""The resources a proxy's clients subscribed to on one server: one upstream subscription per
resource however many clients hold one, each client counted once, and released when its
session ends (a client may leave without unsubscribing).

A session's server is asked with ``resources/subscribe``; a stateless server's listen stream
is opened again to cover the new set (:mod:`mcpbind.proxy.watch`). What is held is asked
again of a new connection (see :class:`~mcpbind.proxy.upstream.Upstream`).
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable

import anyio
from anyio.abc import TaskGroup

from mcpbind.client.remote import RemoteServer
from mcpbind.proxy.watch import Watch
from mcpbind.runtime.session import Session

__all__ = ["Subscriptions"]


class Subscriptions:
    """The subscriptions held on one server. ``server()``: the server, once connected;
    ``current()``: the server and its watch as connected now (``None`` while not);
    ``tasks()``: where a session's release waits; ``release_timeout``: how long that may take."""

    def __init__(
        self,
        server: Callable[[], Awaitable[RemoteServer]],
        current: Callable[[], tuple[RemoteServer | None, Watch | None]],
        tasks: Callable[[], TaskGroup | None],
        release_timeout: float,
    ) -> None:
        self._server = server
        self._current = current
        self._tasks = tasks
        self._release_timeout = release_timeout
        self.counts: dict[str, int] = {}  # each resource, with how many subscriptions hold it
        self._holders: dict[Session, set[str]] = {}

    async def subscribe(self, uri: str) -> None:
        """A client subscribes to ``uri``: the server is asked once for all of them."""
        held = self.counts.get(uri, 0)
        if held == 0:
            remote = await self._server()
            _, watch = self._current()
            if remote.stateless and watch is not None:
                await watch.add(uri, frozenset(self.counts) | {uri})
            else:
                await remote.subscribe_resource(uri)
        self.counts[uri] = self.counts.get(uri, 0) + 1

    async def unsubscribe(self, uri: str) -> None:
        """A client unsubscribes from ``uri``: the server is told when none is left."""
        held = self.counts.get(uri, 0)
        if held <= 1:
            self.counts.pop(uri, None)
            remote, watch = self._current()
            if held == 1 and remote is not None:
                if remote.stateless and watch is not None:
                    watch.drop(frozenset(self.counts))
                else:
                    await remote.unsubscribe_resource(uri)
        else:
            self.counts[uri] = held - 1

    async def subscribe_for(self, session: Session, uri: str) -> None:
        """``session``'s client subscribes to ``uri`` (counted once however often it asks), until
        it unsubscribes (:meth:`unsubscribe_for`) or its session ends."""
        held = self._holders.get(session)
        if held is not None and uri in held:
            return
        await self.subscribe(uri)
        if held is None:
            tasks = self._tasks()
            assert tasks is not None
            held = self._holders[session] = set()
            tasks.start_soon(self._release, session)
        held.add(uri)

    async def unsubscribe_for(self, session: Session, uri: str) -> None:
        """``session``'s client unsubscribes from ``uri``."""
        held = self._holders.get(session)
        if held is not None and uri in held:
            held.discard(uri)
            await self.unsubscribe(uri)

    async def _release(self, session: Session) -> None:
        """Once ``session`` ended, what its client still subscribed to is released."""
        await session.wait_closed()
        with anyio.move_on_after(self._release_timeout):
            for uri in self._holders.pop(session, ()):
                await self.unsubscribe(uri)
