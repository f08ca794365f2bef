"""What a server sends its client, put to the proxy's clients: its questions (sampling,
elicitation, roots) and its log messages, each to the client of the call it belongs to (see
:mod:`mcpbind.proxy.calls`); outside any call, a question to the latest session client that can
answer it and a log message to every session client that asked for logs.
"""

from __future__ import annotations

from typing import Any, Final

import msgspec

from mcpbind import types
from mcpbind.protocol.errors import METHOD_NOT_FOUND, McpError
from mcpbind.protocol.methods import Direction
from mcpbind.proxy.calls import InFlight, declares
from mcpbind.proxy.specs import raw_request
from mcpbind.runtime.context import RequestContext
from mcpbind.runtime.session import Session

__all__ = ["ToClients"]

_TO_CLIENT: Final = Direction.SERVER_TO_CLIENT
_MAX_SESSIONS_KEPT: Final = 256


class ToClients:
    """The proxy's clients as one server's messages reach them: ``in_flight``, the calls
    forwarded to it; the session clients seen lately."""

    def __init__(self, in_flight: InFlight) -> None:
        self.in_flight = in_flight
        self._sessions: dict[int, Session] = {}

    def seen(self, session: Session) -> None:
        """``session``'s client sent a request: the latest seen, for what the server sends
        outside calls (at most ``_MAX_SESSIONS_KEPT`` are kept, ended ones dropped first)."""
        sessions = self._sessions
        key = id(session)
        if sessions.get(key) is session:
            if next(reversed(sessions)) == key:
                return
            del sessions[key]
        sessions[key] = session
        if len(sessions) > _MAX_SESSIONS_KEPT:
            for old in [k for k, s in sessions.items() if s.closed]:
                del sessions[old]
            while len(sessions) > _MAX_SESSIONS_KEPT:
                del sessions[next(iter(sessions))]

    async def ask(self, params: Any, ctx: RequestContext[Any]) -> msgspec.Raw:
        """A question of the server's (sampling, elicitation, roots), put to a client."""
        method = ctx.method
        call = self.in_flight.owner(method)
        if call is not None:
            if call.held is not None:
                answer: msgspec.Raw = await call.held.ask(method, params)
                return answer
            result: msgspec.Raw = await call.ctx.request(raw_request(method, _TO_CLIENT), params)
            return result
        if len(self.in_flight) == 0:  # a question outside any call: a session client answers
            for session in reversed(list(self._sessions.values())):
                if not session.closed and declares(session.connection.peer.capabilities, method):
                    found: msgspec.Raw = await session.request(raw_request(method, _TO_CLIENT), params)
                    return found
        raise McpError(METHOD_NOT_FOUND, f"Method not found: no client of the proxy can answer {method} now")

    async def log(self, params: types.LoggingMessageNotificationParams) -> None:
        logger = params.logger if isinstance(params.logger, str) else None
        call = self.in_flight.owner("notifications/message")
        if call is not None:
            ctx = call.held.ctx if call.held is not None else call.ctx
            await ctx.log(params.level, params.data, logger)
            return
        for session in list(self._sessions.values()):
            if not session.closed:
                try:
                    await RequestContext(session, None, "notifications/message", None).log(
                        params.level, params.data, logger
                    )
                except McpError:  # this client asked for none
                    pass
