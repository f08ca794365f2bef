"""``subscriptions/listen`` (MCP 2026-07-28): long-lived streams that carry a server's list
changes and resource updates to the stateless clients that asked for them.

A listen request is answered by a handler that stays open: it first sends
``notifications/subscriptions/acknowledged`` with the part of the client's filter this server
honours, then each change the filter names, every notification tagged in ``_meta`` with the
listen request's id (``io.modelcontextprotocol/subscriptionId``), and ends with a
``SubscriptionsListenResult`` when the server ends the stream (the session's input ended, the
session or the server is shut down: :meth:`Listeners.end`). A client ends it with
``notifications/cancelled``: then no response is sent. Everything a stream sends is sent as
belonging to the listen request (``related``), so that a transport that routes by request
(Streamable HTTP) puts it on that request's response stream; on stdio it shares the pipe.

Publishing (:meth:`Listeners.publish`) never waits: each listener keeps the changes it has not
sent yet, at most once each (a second ``tools/list_changed`` before the first went out says
nothing more), and at most ``max_backlog`` of them, past which the oldest are dropped with a
warning (a client that does not read holds nothing back and costs bounded memory).

With the tasks extension a stream may also carry ``notifications/tasks`` for the tasks its
filter names (``taskIds``, :mod:`mcpbind.protocol.task_listen`; -32021 to a request not
declaring the extension): the server agrees to those that are the requestor's
(:meth:`TaskWatch.watchable`), sends each one's current state after the acknowledgement, then
the state it has when sent after each change of its status (:meth:`Listeners.publish` of
``notifications/tasks`` with the task's id; workers sharing a store publish each other's, see
:mod:`mcpbind.server.fanout`).

A stream holds one of its session's ``max_concurrent_requests`` places while it is open: a
connection may have at most half of them as streams (further listen requests are refused),
so that its other requests are still served.
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from typing import TYPE_CHECKING, Any, Final, Protocol

import anyio
import msgspec
from msgspec import UNSET

from mcpbind import types
from mcpbind.protocol.envelope import SUBSCRIPTION_ID
from mcpbind.protocol.errors import (
    INTERNAL_ERROR,
    INVALID_REQUEST,
    McpError,
    MissingRequiredClientCapabilityError,
)
from mcpbind.protocol.jsonrpc import RequestId
from mcpbind.protocol.task_listen import ListenFilter
from mcpbind.protocol.tasks import NOTIFICATIONS_TASKS, TASKS_EXTENSION
from mcpbind.protocol.wire import Codec
from mcpbind.runtime.context import RequestContext
from mcpbind.versions import LATEST_VERSION, schema_for

if TYPE_CHECKING:
    from mcpbind.runtime.session import Session

__all__ = ["TASK_STATUS", "Listener", "Listeners", "TaskWatch"]

log = logging.getLogger("mcpbind")

methods = types.methods

TOOLS_LIST_CHANGED: Final = methods.NOTIFICATIONS_TOOLS_LIST_CHANGED.method
PROMPTS_LIST_CHANGED: Final = methods.NOTIFICATIONS_PROMPTS_LIST_CHANGED.method
RESOURCES_LIST_CHANGED: Final = methods.NOTIFICATIONS_RESOURCES_LIST_CHANGED.method
RESOURCES_UPDATED: Final = methods.NOTIFICATIONS_RESOURCES_UPDATED.method
ACKNOWLEDGED: Final = "notifications/subscriptions/acknowledged"
TASK_STATUS: Final = NOTIFICATIONS_TASKS.method
# The most tasks one stream may watch.
MAX_TASK_IDS: Final = 100


class TaskWatch(Protocol):
    """What a listen stream needs of the server's tasks (its
    :class:`~mcpbind.server.tasks.support.TaskSupport`)."""

    async def watchable(self, task_ids: list[str], ctx: RequestContext) -> list[str]:
        """Those of ``task_ids`` whose notifications the requestor of ``ctx`` may have."""
        ...

    async def state(self, task_id: str) -> Any | None:
        """The params of ``notifications/tasks`` for ``task_id`` now (``None``: no such task)."""
        ...


class Listener:
    """One open listen stream: what it asked for and was granted, and the changes it has yet
    to send (in the order they happened, each once)."""

    __slots__ = (
        "dropped",
        "ended",
        "ending",
        "kinds",
        "max_backlog",
        "pending",
        "session",
        "subscription_id",
        "task_ids",
        "uris",
        "wake",
    )

    def __init__(
        self,
        session: Session,
        subscription_id: RequestId,
        kinds: frozenset[str],
        uris: frozenset[str],
        max_backlog: int,
        task_ids: frozenset[str] = frozenset(),
    ) -> None:
        self.session = session
        self.subscription_id = subscription_id
        # The list-change methods it gets, and the URIs whose updates it gets.
        self.kinds = kinds
        self.uris = uris
        # The tasks whose status notifications it gets.
        self.task_ids = task_ids
        self.max_backlog = max_backlog
        # (method, uri or "") of each change not sent yet; a dict as an ordered set.
        self.pending: dict[tuple[str, str], None] = {}
        self.dropped = 0
        # Set when there is something to do (made by the stream's task before it waits).
        self.wake: anyio.Event | None = None
        # The server ends the stream: it sends what is pending, then its result.
        self.ending = False
        # Set once the stream's handler has returned (made when someone waits for it).
        self.ended: anyio.Event | None = None

    def offer(self, method: str, uri: str = "") -> None:
        """Queue a change if this stream asked for it (never waits)."""
        if method == TASK_STATUS:
            if uri not in self.task_ids:
                return
        elif uri:
            if uri not in self.uris:
                return
        elif method not in self.kinds:
            return
        key = (method, uri)
        pending = self.pending
        if key in pending:
            return  # told already, not yet sent: once says it all
        if len(pending) >= self.max_backlog:
            del pending[next(iter(pending))]
            if not self.dropped:
                log.warning(
                    "listen stream %r is not read: dropping its oldest changes (more than %d waiting)",
                    self.subscription_id,
                    self.max_backlog,
                )
            self.dropped += 1
        pending[key] = None
        self.poke()

    def poke(self) -> None:
        wake = self.wake
        if wake is not None:
            wake.set()


class Listeners:
    """The open listen streams of one server, and the handler that serves each.

    ``check_uri``: raises :class:`McpError` for a URI the server refuses (too long); such URIs
    of a filter are not honoured. ``max_backlog``: the most changes one stream keeps unsent.
    """

    def __init__(self, check_uri: Callable[[str], None], *, max_backlog: int = 1024) -> None:
        self.check_uri = check_uri
        self.max_backlog = max_backlog
        # The server's tasks, when it runs some (``taskIds`` are honoured then).
        self.tasks: TaskWatch | None = None
        self.listeners: set[Listener] = set()

    # -- publishing -----------------------------------------------------------------------

    def publish(self, method: str, uri: str = "") -> None:
        """Tell every stream that asked for it of a change: a list change ``method``
        (``notifications/tools/list_changed``...), or ``notifications/resources/updated`` of
        ``uri``. Never waits; call it from the event loop."""
        for listener in self.listeners:
            listener.offer(method, uri)

    def publish_everything(self) -> None:
        """Tell every stream that whatever it asked for may have changed (each list change and
        each URI it listens to): after changes may have been missed (the store that carries
        other workers' changes was away)."""
        for listener in self.listeners:
            for method in listener.kinds:
                listener.offer(method)
            for uri in listener.uris:
                listener.offer(RESOURCES_UPDATED, uri)
            for task_id in listener.task_ids:
                listener.offer(TASK_STATUS, task_id)

    # -- ending ---------------------------------------------------------------------------

    def end(self, session: Session | None = None) -> list[Listener]:
        """End the streams of ``session`` (every stream: ``None``) gracefully: each sends what
        it has pending and its result, from its own task. The streams ended are returned."""
        ended = [listener for listener in self.listeners if session is None or listener.session is session]
        for listener in ended:
            listener.ending = True
            listener.poke()
        return ended

    def end_session(self, session: Session) -> None:
        """``session``'s input ended: its streams end (what a session calls, see
        :attr:`Session.on_input_end <mcpbind.runtime.session.Session.on_input_end>`)."""
        if self.listeners:
            self.end(session)

    async def close(self, session: Session | None = None, *, timeout: float = 1.0) -> None:
        """:meth:`end` the streams of ``session`` (or all) and wait, up to ``timeout`` seconds,
        for them to have sent their results (each stream sends its own)."""
        ended = self.end(session)
        if not ended:
            return
        with anyio.move_on_after(timeout):
            for listener in ended:
                if listener in self.listeners:
                    if listener.ended is None:
                        listener.ended = anyio.Event()
                    await listener.ended.wait()

    # -- serving one stream -----------------------------------------------------------------

    def honoured(self, requested: Any, ctx: RequestContext) -> tuple[frozenset[str], list[str]]:
        """What of the filter ``requested`` (a 2026-07-28 ``SubscriptionFilter``) this server
        honours: the list changes it declares (``listChanged``), and the URIs it accepts if it
        declares ``resources.subscribe``."""
        capabilities = ctx.session.connection.capabilities
        kinds = set()
        for asked, part, method in (
            (requested.tools_list_changed, "tools", TOOLS_LIST_CHANGED),
            (requested.prompts_list_changed, "prompts", PROMPTS_LIST_CHANGED),
            (requested.resources_list_changed, "resources", RESOURCES_LIST_CHANGED),
        ):
            if asked is True and getattr(getattr(capabilities, part, UNSET), "list_changed", UNSET) is True:
                kinds.add(method)
        uris: list[str] = []
        resources = getattr(capabilities, "resources", UNSET)
        if requested.resource_subscriptions and getattr(resources, "subscribe", UNSET) is True:
            for uri in dict.fromkeys(requested.resource_subscriptions):
                try:
                    self.check_uri(uri)
                except McpError:
                    continue
                uris.append(uri)
        return frozenset(kinds), uris

    async def honoured_tasks(self, requested: Any, ctx: RequestContext) -> list[str]:
        """The tasks of the filter ``requested`` whose status this server agrees to send: the
        requestor's own (at most :data:`MAX_TASK_IDS`). -32021 when the request does not
        declare the tasks extension."""
        asked = getattr(requested, "task_ids", UNSET)
        if not isinstance(asked, list) or not asked:
            return []
        envelope = ctx.envelope
        if envelope is None or TASKS_EXTENSION not in envelope.extensions:
            raise MissingRequiredClientCapabilityError(
                {"extensions": {TASKS_EXTENSION: {}}},
                "Task status notifications need the tasks extension in the client capabilities",
            )
        if self.tasks is None:
            return []
        return await self.tasks.watchable(list(dict.fromkeys(asked))[:MAX_TASK_IDS], ctx)

    async def _task_notification(self, task_id: str, meta: dict[str, Any]) -> bytes | None:
        tasks = self.tasks
        state = None if tasks is None else await tasks.state(task_id)
        if state is None:
            return None
        own = state.meta if isinstance(state.meta, dict) else {}
        return Codec.encode_notification(TASK_STATUS, msgspec.structs.replace(state, meta={**own, **meta}))

    async def listen(self, params: Any, ctx: RequestContext) -> Any:
        """The ``subscriptions/listen`` handler: one call is one stream (see the module)."""
        session = ctx.session
        ident = ctx.request_id
        if ident is None:  # pragma: no cover - a request always has an id
            raise McpError(INVALID_REQUEST, "subscriptions/listen needs a request id")
        connection = session.connection
        if not connection.delivery.related:
            raise McpError(
                INVALID_REQUEST, "This transport cannot carry a listen stream (no messages before a response)"
            )
        limit = max(1, session.max_concurrent_requests // 2)
        # (a stream the client cancelled counts no more, even before its task has unwound)
        open_streams = sum(
            1
            for listener in self.listeners
            if listener.session is session and connection.envelope_of(listener.subscription_id) is not None
        )
        if open_streams >= limit:
            raise McpError(
                INTERNAL_ERROR,
                f"Too many listen streams on this connection (limit {limit}, half of the requests "
                "it may have running); cancel one, or listen for more on one stream",
            )
        modern = schema_for(LATEST_VERSION)  # (a stateless request loaded it already)
        kinds, uris = self.honoured(params.notifications, ctx)
        task_ids = await self.honoured_tasks(params.notifications, ctx)
        meta = {SUBSCRIPTION_ID: ident}
        granted = ListenFilter(
            tools_list_changed=True if TOOLS_LIST_CHANGED in kinds else UNSET,
            prompts_list_changed=True if PROMPTS_LIST_CHANGED in kinds else UNSET,
            resources_list_changed=True if RESOURCES_LIST_CHANGED in kinds else UNSET,
            resource_subscriptions=uris if uris else UNSET,
            task_ids=task_ids if task_ids else UNSET,
        )
        listener = Listener(session, ident, kinds, frozenset(uris), self.max_backlog, frozenset(task_ids))
        for task_id in task_ids:  # each task's state now, first
            listener.offer(TASK_STATUS, task_id)
        # Listening before the acknowledgment is sent: a change meanwhile waits for it.
        self.listeners.add(listener)
        try:
            ack = modern.SubscriptionsAcknowledgedNotificationParams(meta=meta, notifications=granted)
            await session.send(Codec.encode_notification(ACKNOWLEDGED, ack), ident)
            pending = listener.pending
            while True:
                while pending:
                    method, uri = next(iter(pending))
                    del pending[(method, uri)]
                    if method == TASK_STATUS:
                        data = await self._task_notification(uri, meta)
                        if data is not None:
                            await session.send(data, ident)
                        continue
                    await session.send(_notification(method, uri, meta), ident)
                if listener.ending:
                    break
                wake = listener.wake = session.new_event()
                await wake.wait()
                listener.wake = None
            if listener.dropped:
                log.info("listen stream %r dropped %d changes in all", ident, listener.dropped)
            # The stream answers itself, so that whoever waits for its end (see close) knows
            # the answer went out; the session then has nothing left to send for it.
            result = modern.SubscriptionsListenResult(meta=meta)
            data = connection.respond(ident, connection.spec_of(ctx.method), result)
            if data is not None:
                await session.send(data, ident, True)
        finally:
            self.listeners.discard(listener)
            if listener.ended is not None:
                listener.ended.set()
        return result


def _notification(method: str, uri: str, meta: dict[str, Any]) -> bytes:
    """A change as the stream sends it, tagged with the stream's ``meta``."""
    params: Any
    if uri:
        params = types.ResourceUpdatedNotificationParams(uri=uri, meta=meta)
    else:
        params = types.NotificationParams(meta=meta)
    return Codec.encode_notification(method, params)
