"""What the HTTP server apps need of the MCP server they serve: :class:`ServerEndpoint`.

The apps (the Streamable HTTP app, the legacy HTTP+SSE app) take any object with these few
methods, not :class:`mcpbind.server.server.Server` itself (which has them): so the HTTP layer
never imports the server endpoint, and ``Server.http_app()`` importing the app is an import in
one direction only.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from contextlib import AbstractAsyncContextManager
from typing import Protocol

from mcpbind.protocol.connection import Connection, Delivery
from mcpbind.runtime.session import Session, Spawn
from mcpbind.store.base import Store
from mcpbind.transports.base import Transport

__all__ = ["ServerEndpoint"]


class ServerEndpoint(Protocol):
    """A server that opens sessions over transports, and says which protocol versions it
    speaks.

    * ``versions``: those versions, the preferred first (a request's ``MCP-Protocol-Version``
      must name one).
    * ``connection(delivery=...)``: the server side of a new connection over a transport that
      carries ``delivery`` (its capabilities say so, and it refuses to send what could not
      arrive).
    * ``inline_session(transport, spawn=..., register=..., connection=...)``: a session with no
      task of its own, fed by whoever receives its messages (the Streamable HTTP app: each
      POST's task), starting tasks with ``spawn``; with ``register`` it is one of the server's
      sessions (broadcasts, subscriptions) until ``end_session``.
    * ``end_session(session)``: end such a session, cancelling its handlers.
    * ``subscriptions_of(session)``, ``restore_subscriptions(session, uris)``: the URIs a
      session subscribed to, read and set (workers sharing sessions keep them in the store).
    * ``run(transport)``: serve one client over a transport that is read with ``receive()``
      (the legacy app's), until it closes.
    * ``serving(store=None)``: the server serves during the block (its lifespan is entered or
      joined), one of the workers sharing ``store`` if given; each app holds it while it runs.
    """

    @property
    def versions(self) -> Sequence[str]: ...

    def connection(self, *, delivery: Delivery = ...) -> Connection: ...

    def inline_session(
        self,
        transport: Transport,
        *,
        spawn: Spawn | None = None,
        register: bool = True,
        connection: Connection | None = None,
    ) -> Session: ...

    async def end_session(self, session: Session) -> None: ...

    def subscriptions_of(self, session: Session) -> frozenset[str]: ...

    def restore_subscriptions(self, session: Session, uris: Iterable[str]) -> None: ...

    async def end_listen_streams(self, timeout: float = ...) -> None:
        """End the open ``subscriptions/listen`` streams with their results (the app stops)."""

    async def run(self, transport: Transport) -> None: ...

    def serving(self, store: Store | None = None) -> AbstractAsyncContextManager[None]: ...
