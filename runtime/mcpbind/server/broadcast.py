"""What a server sends to every session it serves: list changes and, to the sessions
subscribed to a URI, ``notifications/resources/updated``; and the subscriptions themselves
(the built-in ``resources/subscribe`` and ``unsubscribe`` handlers). The same changes go to
the listen streams of stateless clients (:mod:`mcpbind.server.listen`), and only there: a
connection speaking a stateless version gets no plain list change.

None of it waits for any client: each session's transport takes its copy at once if it can,
or it waits in a queue of that session (see :meth:`Session.send_soon
<mcpbind.runtime.session.Session.send_soon>` and :meth:`Session.deliver <mcpbind.runtime.session.Session.deliver>`).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import anyio.lowlevel

from mcpbind import types
from mcpbind.protocol.errors import METHOD_NOT_FOUND, McpError
from mcpbind.protocol.methods import NotificationSpec
from mcpbind.runtime.context import RequestContext
from mcpbind.runtime.session import Session
from mcpbind.server.listen import Listeners

__all__ = ["Broadcasts"]

methods = types.methods


class Broadcasts:
    """The sessions a :class:`~mcpbind.server.server.Server` serves and the URIs each subscribed to.

    ``check_uri``: called with each URI to subscribe to; raises :class:`McpError` for one the
    server refuses (too long). ``listeners``: the server's listen streams, told of the same
    changes.
    """

    def __init__(self, check_uri: Callable[[str], None], listeners: Listeners | None = None) -> None:
        self.check_uri = check_uri
        self.sessions: set[Session] = set()
        self.subscriptions: dict[Session, set[str]] = {}
        self.listeners = listeners if listeners is not None else Listeners(check_uri)

    def add(self, session: Session) -> None:
        """Serve ``session``: it gets the broadcasts from now on."""
        self.sessions.add(session)

    def forget(self, session: Session) -> None:
        """``session`` ended: no more broadcasts, and its subscriptions are dropped."""
        self.sessions.discard(session)
        self.subscriptions.pop(session, None)

    async def subscribe(self, params: types.SubscribeRequestParams, ctx: RequestContext) -> types.Result:
        """The built-in ``resources/subscribe`` handler."""
        require_subscribe(ctx)
        self.check_uri(params.uri)
        self.subscriptions.setdefault(ctx.session, set()).add(params.uri)
        return types.Result()

    async def unsubscribe(self, params: types.UnsubscribeRequestParams, ctx: RequestContext) -> types.Result:
        """The built-in ``resources/unsubscribe`` handler."""
        require_subscribe(ctx)
        self.subscriptions.get(ctx.session, set()).discard(params.uri)
        return types.Result()

    async def resource_updated(self, uri: str) -> None:
        """Send ``notifications/resources/updated`` to every session subscribed to ``uri``, and
        to the listen streams that asked for it."""
        self.listeners.publish(methods.NOTIFICATIONS_RESOURCES_UPDATED.method, uri)
        params = types.ResourceUpdatedNotificationParams(uri=uri)
        sent = True
        for session, uris in list(self.subscriptions.items()):
            if uri in uris and not session.closed:
                data = session.connection.notification(methods.NOTIFICATIONS_RESOURCES_UPDATED, params)
                sent &= await session.deliver(data)
        if not sent:
            await anyio.lowlevel.checkpoint()  # the sessions' tasks send some before more come

    def changed_soon(self, spec: NotificationSpec[Any, Any]) -> None:
        """Queue the list change ``spec`` to every session ready for it (never one of a stateless
        version: its connection is never ready), and to the listen streams, from synchronous code."""
        self.listeners.publish(spec.method)
        params = types.NotificationParams()
        for session in list(self.sessions):
            if not session.closed and session.is_ready:
                session.send_soon(session.connection.notification(spec, params))

    async def broadcast(self, spec: NotificationSpec[Any, Any]) -> None:
        """Send the list change ``spec`` to every open session of a handshake version, and to the
        listen streams that asked for it."""
        self.listeners.publish(spec.method)
        params = types.NotificationParams()
        sent = True
        for session in list(self.sessions):
            if not session.closed and not session.connection.modern:
                sent &= await session.deliver(session.connection.notification(spec, params))
        if not sent:
            await anyio.lowlevel.checkpoint()  # the sessions' tasks send some before more come


def require_subscribe(ctx: RequestContext) -> None:
    """``resources/subscribe`` and ``unsubscribe`` exist only where ``resources.subscribe`` is
    declared (not where no update could reach the client: see :class:`Delivery
    <mcpbind.protocol.connection.Delivery>`)."""
    resources = getattr(ctx.session.connection.capabilities, "resources", types.UNSET)
    if getattr(resources, "subscribe", types.UNSET) is not True:
        raise McpError(METHOD_NOT_FOUND, f"Method not found: {ctx.method}")
