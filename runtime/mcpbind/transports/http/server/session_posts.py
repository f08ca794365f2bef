"""The POSTs of 2025-era sessions (those that ``initialize``) in the Streamable HTTP app:
:class:`SessionPosts`. An ``initialize`` opens a session in the table; any other message names
one (``Mcp-Session-Id``): a request is answered (JSON or SSE), a notification or a response
gets 202. With a store, the session may have been opened by another worker, and what the
client sends may be for another worker's copy of it (see
:mod:`~mcpbind.transports.http.server.sharing`)."""

from __future__ import annotations

import time
from collections.abc import Awaitable, Callable

import anyio
from msgspec import UnsetType

from mcpbind.protocol.errors import INVALID_REQUEST
from mcpbind.protocol.jsonrpc import RequestId
from mcpbind.runtime.session import Session
from mcpbind.transports.http._asgi import Headers, Receive, Send
from mcpbind.transports.http.errors import SESSION_NOT_FOUND, HttpError, send_empty
from mcpbind.transports.http.server.post import Post
from mcpbind.transports.http.server.sessions import SessionState, SessionTable
from mcpbind.transports.http.server.sharing import SessionSharing

__all__ = ["SessionPosts"]


class SessionPosts:
    """Serves the POSTs of the sessions of ``table``, its requests answered by ``answer``
    (JSON or SSE); ``sharing``: what the workers of a store share (``None``: no store)."""

    def __init__(
        self,
        table: SessionTable,
        answer: Callable[[Post], Awaitable[None]],
        sharing: SessionSharing | None,
    ) -> None:
        self.table = table
        self.answer_request = answer
        self.sharing = sharing

    async def find(self, session_id: bytes | None) -> SessionState:
        """The session a GET or DELETE names (from the store's record, with one)."""
        if self.sharing is None:
            return self.table.find(session_id)
        return await self.sharing.find(session_id)

    async def answer(
        self,
        session_id: bytes | None,
        method: str | UnsetType,
        ident: RequestId | UnsetType | None,
        body: bytes,
        receive: Receive,
        send: Send,
    ) -> None:
        """Serve a POST carrying ``body`` (its ``method`` and ``ident`` peeked already; a
        request's id is not null)."""
        is_request = not isinstance(method, UnsetType) and not isinstance(ident, UnsetType)
        initialize = method == "initialize"
        if initialize:
            if session_id is not None:
                raise HttpError(
                    400,
                    INVALID_REQUEST,
                    "Bad request: initialize must not carry an Mcp-Session-Id",
                    None if isinstance(ident, UnsetType) else ident,
                )
            state = self.table.new()
        else:
            sharing = self.sharing
            if sharing is None:  # (no await on the hot path)
                state = self.table.find(session_id)
            else:
                state = await sharing.find(session_id)
        state.active += 1
        try:
            session = state.session
            if session.closed:
                raise HttpError(404, SESSION_NOT_FOUND, "Session ended")
            if not is_request:
                if self.sharing is not None and await self.sharing.received(
                    state,
                    None if isinstance(method, UnsetType) else method,
                    None if isinstance(ident, UnsetType) else ident,
                    body,
                ):
                    await send_empty(send, 202, list(state.header))  # (for another worker)
                    return
                await self._accept(session, body, not isinstance(method, UnsetType), send, list(state.header))
                return
            assert ident is not None and not isinstance(ident, UnsetType)
            if state.transport.in_flight(ident):
                raise HttpError(400, INVALID_REQUEST, f"Request id {ident!r} is already in use", ident)
            spawn = self.table.spawn
            assert spawn is not None
            await self.answer_request(Post(state, ident, body, receive, send, initialize, spawn))
        finally:
            state.active -= 1
            state.last_seen = time.monotonic()

    async def _accept(
        self, session: Session, body: bytes, notification: bool, send: Send, headers: Headers
    ) -> None:
        """A notification or a response: 202. A response wakes its waiter before the answer; a
        notification's handler runs after it, so that the client is not held by a slow one."""
        if not notification:
            try:
                await session.feed(body)
            except anyio.ClosedResourceError:
                raise HttpError(404, SESSION_NOT_FOUND, "Session ended") from None
        await send_empty(send, 202, headers)
        if notification:
            try:
                await session.feed(body)
            except anyio.ClosedResourceError:
                pass
