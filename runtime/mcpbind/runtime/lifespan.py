"""A server's lifespan: what it sets up once when it starts serving (a database pool, a model,
a cache), shared by every handler of every session as ``ctx.lifespan_state``, and tears down
when it stops.

::

    @asynccontextmanager
    async def lifespan(server: Server) -> AsyncIterator[State]:
        async with open_pool() as pool:
            yield State(pool)                      # ctx.lifespan_state in every handler

    server = Server("demo", "1.0", lifespan=lifespan)

The factory is called with the server and entered once, by whatever starts serving first:
``Server.run`` (stdio, or any transport), the ASGI lifespan of ``Server.http_app()`` (and so
``serve_http``), or ``async with server.serving():`` around several ``run`` calls. Serving
that starts while the lifespan is entered joins it instead (waiting for it to be entered, if
that is under way); the lifespan is left in the task that entered it, when that one's
serving ends (with a warning if others still serve). The state can be read only meanwhile
(``RuntimeError`` otherwise).
"""

from __future__ import annotations

import logging
from collections.abc import AsyncIterator, Callable
from contextlib import AbstractAsyncContextManager, asynccontextmanager
from typing import Any

import anyio

__all__ = ["Lifespan", "LifespanFactory"]

log = logging.getLogger("mcpbind")

# Called with the server; what the context manager yields is the lifespan state.
LifespanFactory = Callable[[Any], AbstractAsyncContextManager[Any]]


class Lifespan:
    """The lifespan of one server (its ``owner``, given to ``factory``)."""

    __slots__ = ("_entered", "_factory", "_joined", "_owner", "_running", "_state")

    def __init__(self, factory: LifespanFactory, owner: object) -> None:
        self._factory = factory
        self._owner = owner
        self._state: Any = None
        self._running = False
        # Set once the factory's context manager is entered (or failed to be); None when no
        # serving is under way.
        self._entered: anyio.Event | None = None
        self._joined = 0  # serving blocks that joined the one that entered it, still running

    @property
    def running(self) -> bool:
        """Whether the lifespan is entered (its state can be read)."""
        return self._running

    @property
    def state(self) -> Any:
        """What the factory's context manager yielded; ``RuntimeError`` outside its lifetime."""
        if not self._running:
            raise RuntimeError(
                "the server's lifespan is not running: its state exists only while the server is "
                "serving (Server.run, the ASGI lifespan of http_app(), or `async with server.serving()`)"
            )
        return self._state

    @asynccontextmanager
    async def serving(self) -> AsyncIterator[None]:
        """Enter the lifespan for the block, or join it if it is entered already."""
        entered = self._entered
        if entered is not None:
            await entered.wait()
            if not self._running:
                raise RuntimeError("the server's lifespan failed to start")
            self._joined += 1
            try:
                yield
            finally:
                self._joined -= 1
            return
        entered = self._entered = anyio.Event()
        try:
            async with self._factory(self._owner) as state:
                self._state = state
                self._running = True
                entered.set()
                try:
                    yield
                finally:
                    if self._joined:
                        log.warning(
                            "the server's lifespan ends while %d other serving blocks still run; to "
                            "share it, serve them all inside `async with server.serving():`",
                            self._joined,
                        )
                    self._running = False
                    self._state = None
        finally:
            entered.set()  # wakes those waiting to join a lifespan that failed to start
            self._entered = None
