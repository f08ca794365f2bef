"""Stateless mode of the Streamable HTTP app (``stateless=True``): no sessions; each POST runs
on a fresh connection, initialized at the version of its ``MCP-Protocol-Version`` header
(2025-03-26 when absent), and ends with it. A notification or response gets 202 and is
dropped, since nothing could follow it. (GET and DELETE get 405, in the app.)"""

from __future__ import annotations

import anyio
from msgspec import UnsetType

from mcpbind.protocol.connection import Connection, Delivery
from mcpbind.protocol.jsonrpc import RequestId
from mcpbind.runtime.session import Spawn
from mcpbind.transports.http._asgi import Receive, Send
from mcpbind.transports.http.endpoint import ServerEndpoint
from mcpbind.transports.http.errors import EMPTY, send_empty
from mcpbind.transports.http.server.post import Post, RequestAnswers
from mcpbind.transports.http.server.sessions import SessionState
from mcpbind.transports.http.server.transport import HttpSessionTransport

__all__ = ["StatelessPosts"]


class StatelessPosts:
    """Answers each POST on a connection of its own, made by ``server`` for ``delivery``, with
    ``answers`` (JSON bodies with ``json_response``, else SSE streams, each bounded as given)."""

    def __init__(
        self,
        server: ServerEndpoint,
        answers: RequestAnswers,
        *,
        delivery: Delivery,
        json_response: bool,
        max_buffered_events: int,
        max_buffered_bytes: int,
    ) -> None:
        self.server = server
        self.delivery = delivery
        self.max_buffered_events = max_buffered_events
        self.max_buffered_bytes = max_buffered_bytes
        self._answer = answers.json if json_response else answers.sse
        # A connection made ready once per version, copied for each request.
        self._ready_connections: dict[str, Connection] = {}

    async def answer(
        self,
        method: str | UnsetType,
        ident: RequestId | UnsetType | None,
        body: bytes,
        version: str,
        receive: Receive,
        send: Send,
        spawn: Spawn | None,
    ) -> None:
        """Answer the POST of one message (``method`` and ``ident`` peeked from ``body``) at
        ``version``; ``spawn`` starts tasks in the app's task group (``None`` without one)."""
        if isinstance(method, UnsetType) or ident is None or isinstance(ident, UnsetType):
            # Nothing can follow a notification or response without a session: accepted, dropped.
            await send_empty(send, 202, EMPTY)
            return
        transport = HttpSessionTransport(
            "",
            event_store=None,
            backlog=0,
            max_buffered_events=self.max_buffered_events,
            max_buffered_bytes=self.max_buffered_bytes,
        )
        transport.protocol_version = version
        if method == "initialize":
            connection = self.server.connection(delivery=self.delivery)
        else:
            # A connection ready at this version, copied from one made once per version.
            ready = self._ready_connections.get(version)
            if ready is None:
                ready = self._ready_connections[version] = self.server.connection(delivery=self.delivery)
                ready.assume_ready(version)
            connection = ready.fresh()
        session = self.server.inline_session(transport, spawn=spawn, register=False, connection=connection)
        state = SessionState("", transport, session)
        if spawn is not None:
            await self._answer(Post(state, ident, body, receive, send, False, spawn))
            return
        # No lifespan: a task group of this request's own, opened before the handler starts.
        async with anyio.create_task_group() as tg:
            await self._answer(Post(state, ident, body, receive, send, False, tg.start_soon))
