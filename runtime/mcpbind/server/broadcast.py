"""What a server sends to every session it serves: list changes and, to the sessions
subscribed to a URI, ``notifications/resources/updated``; and the subscriptions themselves
(the built-in ``resources/subscribe`` and ``unsubscribe`` handlers). The same changes go to
the listen streams of stateless clients (:mod:`mcpbind.server.listen`), and only there: a
connection speaking a stateless version gets no plain list change.

None of it waits for any client: each session's transport takes its copy at once if it can,
or it waits in a queue of that session (see :meth:`Session.send_soon
<mcpbind.runtime.session.Session.send_soon>` and :meth:`Session.deliver <mcpbind.runtime.session.Session.deliver>`).

Workers sharing a store tell each other their changes (:mod:`mcpbind.server.fanout`): each
change raised here is also given to :attr:`Broadcasts.relay`, and the changes of the other
workers come back through :meth:`Broadcasts.changed_elsewhere`, which delivers them here only.
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
from mcpbind.server.listen import TASK_STATUS, Listeners

__all__ = ["Broadcasts"]

methods = types.methods

RESOURCES_UPDATED = methods.NOTIFICATIONS_RESOURCES_UPDATED
# The list changes, by method.
LIST_CHANGES: dict[str, NotificationSpec[Any, Any]] = {
    spec.method: spec
    for spec in (
        methods.NOTIFICATIONS_TOOLS_LIST_CHANGED,
        methods.NOTIFICATIONS_PROMPTS_LIST_CHANGED,
        methods.NOTIFICATIONS_RESOURCES_LIST_CHANGED,
    )
}


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
        # Told of each change raised here, ``(method, uri or "")``, when the server shares a
        # store with other workers (never waits).
        self.relay: Callable[[str, str], None] | None = None

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
        to the listen streams that asked for it (and to the other workers, if any)."""
        if self.relay is not None:
            self.relay(RESOURCES_UPDATED.method, uri)
        await self._updated(uri)

    async def _updated(self, uri: str) -> None:
        self.listeners.publish(RESOURCES_UPDATED.method, uri)
        params = types.ResourceUpdatedNotificationParams(uri=uri)
        sent = True
        for session, uris in list(self.subscriptions.items()):
            if uri in uris and not session.closed:
                data = session.connection.notification(RESOURCES_UPDATED, params)
                sent &= await session.deliver(data)
        if not sent:
            await anyio.lowlevel.checkpoint()  # the sessions' tasks send some before more come

    def changed_soon(self, spec: NotificationSpec[Any, Any]) -> None:
        """Queue the list change ``spec`` to every session ready for it (never one of a stateless
        version: its connection is never ready), and to the listen streams, from synchronous code."""
        self.listeners.publish(spec.method)
        if self.relay is not None:
            self.relay(spec.method, "")
        params = types.NotificationParams()
        for session in list(self.sessions):
            if not session.closed and session.is_ready:
                session.send_soon(session.connection.notification(spec, params))

    async def broadcast(self, spec: NotificationSpec[Any, Any]) -> None:
        """Send the list change ``spec`` to every open session of a handshake version, and to the
        listen streams that asked for it."""
        if self.relay is not None:
            self.relay(spec.method, "")
        await self._changed(spec)

    async def _changed(self, spec: NotificationSpec[Any, Any]) -> None:
        self.listeners.publish(spec.method)
        params = types.NotificationParams()
        sent = True
        for session in list(self.sessions):
            if not session.closed and not session.connection.modern:
                sent &= await session.deliver(session.connection.notification(spec, params))
        if not sent:
            await anyio.lowlevel.checkpoint()  # the sessions' tasks send some before more come

    def task_changed(self, task_id: str) -> None:
        """The status of task ``task_id`` changed: the listen streams watching it (here and on
        the other workers) send its state (never waits)."""
        self.listeners.publish(TASK_STATUS, task_id)
        if self.relay is not None:
            self.relay(TASK_STATUS, task_id)

    async def changed_elsewhere(self, method: str, uri: str = "") -> None:
        """A change another worker raised (a list change ``method``, an update of ``uri``, or
        a change of status of the task ``uri``):
        delivered to this worker's sessions and listen streams, and not relayed again. A
        method that is neither is ignored."""
        if uri:
            if method == RESOURCES_UPDATED.method:
                await self._updated(uri)
            elif method == TASK_STATUS:
                self.listeners.publish(TASK_STATUS, uri)
            return
        spec = LIST_CHANGES.get(method)
        if spec is not None:
            await self._changed(spec)

    async def all_changed(self) -> None:
        """Changes may have been missed (the store carrying the other workers' changes was
        away): every listen stream, and every session of a handshake version, is told that
        each list it may watch changed and each resource it subscribed to was updated."""
        self.listeners.publish_everything()
        params = types.NotificationParams()
        for spec in LIST_CHANGES.values():
            part = spec.method.split("/")[1]  # notifications/<part>/list_changed
            for session in list(self.sessions):
                capability = getattr(session.connection.capabilities, part, types.UNSET)
                declared = getattr(capability, "list_changed", types.UNSET) is True
                if declared and not session.closed and not session.connection.modern:
                    await session.deliver(session.connection.notification(spec, params))
        for session, uris in list(self.subscriptions.items()):
            for uri in list(uris):
                if not session.closed:
                    updated = types.ResourceUpdatedNotificationParams(uri=uri)
                    await session.deliver(session.connection.notification(RESOURCES_UPDATED, updated))


def require_subscribe(ctx: RequestContext) -> None:
    """``resources/subscribe`` and ``unsubscribe`` exist only where ``resources.subscribe`` is
    declared (not where no update could reach the client: see :class:`Delivery
    <mcpbind.protocol.connection.Delivery>`)."""
    resources = getattr(ctx.session.connection.capabilities, "resources", types.UNSET)
    if getattr(resources, "subscribe", types.UNSET) is not True:
        raise McpError(METHOD_NOT_FOUND, f"Method not found: {ctx.method}")
