"""Change notifications for a client, as typed events: ``RemoteServer.listen()`` opens a
``subscriptions/listen`` stream (MCP 2026-07-28) for the kinds of change asked for and yields
:class:`ToolsListChanged`, :class:`PromptsListChanged`, :class:`ResourcesListChanged` and
:class:`ResourceUpdated` events as they come; with the tasks extension
(``io.modelcontextprotocol/tasks``), the status changes of the tasks asked for
(``task_ids``) as :class:`TaskChanged` events carrying the server's ``DetailedTask``.

On stdio every stream shares the pipe: notifications are routed to their listener by the
``io.modelcontextprotocol/subscriptionId`` they carry (the id of the listen request). Over
Streamable HTTP the listen POST's SSE stream stays open and carries them. A session of a
handshake version (2025 and older) has no ``subscriptions/listen``: there ``listen()`` uses
the session's own notifications (the list changes the server declared ``listChanged`` for,
and ``resources/subscribe`` for the URIs asked for, when the server offers it), so the same
code runs against both eras (task notifications are the extension's, at a stateless version
only: a session leaves the tasks out of :attr:`Listener.acknowledged`).
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from types import TracebackType
from typing import TYPE_CHECKING, Any, Final

import anyio
import anyio.abc
import msgspec
from anyio.streams.memory import MemoryObjectReceiveStream, MemoryObjectSendStream
from msgspec import UNSET

from mcpbind.client.tasks import declaring_tasks
from mcpbind.protocol import task_listen
from mcpbind.protocol import tasks as ext
from mcpbind.protocol.envelope import SUBSCRIPTION_ID
from mcpbind.protocol.errors import CONNECTION_CLOSED, McpError
from mcpbind.protocol.jsonrpc import RequestId
from mcpbind.runtime.context import RequestContext
from mcpbind.runtime.handlers import NotificationHandler
from mcpbind.versions import LATEST_VERSION, schema_for

if TYPE_CHECKING:
    from mcpbind.client.remote import RemoteServer

__all__ = [
    "ChangeEvent",
    "Listener",
    "PromptsListChanged",
    "ResourceUpdated",
    "ResourcesListChanged",
    "Subscriptions",
    "TaskChanged",
    "ToolsListChanged",
]

ACKNOWLEDGED: Final = "notifications/subscriptions/acknowledged"
TOOLS_CHANGED: Final = "notifications/tools/list_changed"
PROMPTS_CHANGED: Final = "notifications/prompts/list_changed"
RESOURCES_CHANGED: Final = "notifications/resources/list_changed"
RESOURCE_UPDATED: Final = "notifications/resources/updated"
TASK_CHANGED: Final = ext.NOTIFICATIONS_TASKS.method
ROUTED: Final = (
    ACKNOWLEDGED,
    TOOLS_CHANGED,
    PROMPTS_CHANGED,
    RESOURCES_CHANGED,
    RESOURCE_UPDATED,
    TASK_CHANGED,
)


@dataclass(frozen=True, slots=True)
class ToolsListChanged:
    """The server's list of tools changed: list them again."""


@dataclass(frozen=True, slots=True)
class PromptsListChanged:
    """The server's list of prompts changed."""


@dataclass(frozen=True, slots=True)
class ResourcesListChanged:
    """The server's list of resources changed."""


@dataclass(frozen=True, slots=True)
class ResourceUpdated:
    """The resource at ``uri`` (one asked for) changed: read it again."""

    uri: str


@dataclass(frozen=True, slots=True)
class TaskChanged:
    """A task asked for (``task_ids``) has a new status: ``task`` is the server's
    ``DetailedTask`` (one of :data:`mcpbind.protocol.tasks.DetailedTask`), with the result or
    error of a task that ended and the input requests of one that waits for input."""

    task: ext.DetailedTask


ChangeEvent = ToolsListChanged | PromptsListChanged | ResourcesListChanged | ResourceUpdated | TaskChanged

_SIMPLE: Final[Mapping[str, ChangeEvent]] = {
    TOOLS_CHANGED: ToolsListChanged(),
    PROMPTS_CHANGED: PromptsListChanged(),
    RESOURCES_CHANGED: ResourcesListChanged(),
}


def _task_state(params: Any) -> ext.DetailedTask | None:
    """The ``DetailedTask`` a ``notifications/tasks`` carries (None when it carries none)."""
    try:
        state: ext.DetailedTask
        if isinstance(params, msgspec.Raw | bytes):
            state = msgspec.json.decode(params, type=ext.DetailedTask)
        else:
            builtins = msgspec.to_builtins(params) if isinstance(params, msgspec.Struct) else params
            state = msgspec.convert(builtins, ext.DetailedTask)
        return state
    except (msgspec.ValidationError, msgspec.DecodeError, TypeError):
        return None


def _event(method: str, params: Any) -> ChangeEvent | None:
    simple = _SIMPLE.get(method)
    if simple is not None:
        return simple
    if method == TASK_CHANGED:
        state = _task_state(params)
        return TaskChanged(state) if state is not None else None
    uri = getattr(params, "uri", None)
    return ResourceUpdated(uri) if method == RESOURCE_UPDATED and isinstance(uri, str) else None


class Subscriptions:
    """The listeners of one connection, and the notification handlers that feed them (each
    wrapping the user's own handler for that method, which still runs for notifications no
    listener claims). ``on_change`` is told of every change event (the cache drops what it
    made stale)."""

    def __init__(
        self,
        user_handlers: Mapping[str, NotificationHandler],
        on_change: Callable[[ChangeEvent], None] | None = None,
    ) -> None:
        self._user = user_handlers
        self._on_change = on_change
        self._tagged: dict[RequestId, Listener] = {}  # stateless: by subscription id
        self._untagged: set[Listener] = set()  # a session's: by kind

    def handlers(self) -> dict[str, NotificationHandler]:
        """The user's handlers, with the routed methods going through here first."""
        merged = dict(self._user)
        for method in ROUTED:
            merged[method] = self._route
        return merged

    async def _route(self, params: Any, ctx: RequestContext[Any]) -> None:
        method = ctx.method
        meta = getattr(params, "meta", UNSET)
        tag = meta.get(SUBSCRIPTION_ID) if isinstance(meta, dict) else None
        if tag is not None:
            listener = self._tagged.get(tag)
            if listener is not None:
                listener.receive(method, params)
            return  # a stream's notification goes to its listener only
        event = _event(method, params)
        if event is not None:
            if self._on_change is not None:
                self._on_change(event)
            for untagged in list(self._untagged):
                untagged.offer(event)
        user = self._user.get(method)
        if user is not None:
            await user(params, ctx)

    def add(self, listener: Listener, tag: RequestId | None) -> None:
        if tag is None:
            self._untagged.add(listener)
        else:
            self._tagged[tag] = listener

    def remove(self, listener: Listener, tag: RequestId | None) -> None:
        if tag is None:
            self._untagged.discard(listener)
        elif self._tagged.get(tag) is listener:
            del self._tagged[tag]

    def changed(self, event: ChangeEvent) -> None:
        if self._on_change is not None:
            self._on_change(event)


class Listener:
    """One listen stream: ``async with server.listen(tools=True) as changes: async for event in
    changes: ...``. :attr:`acknowledged` is what the server agreed to send (a
    ``SubscriptionFilter`` of MCP 2026-07-28: ``tools_list_changed``, ``prompts_list_changed``,
    ``resources_list_changed``, ``resource_subscriptions``; with ``task_ids``, a
    :class:`~mcpbind.protocol.task_listen.ListenFilter` whose ``task_ids`` are the tasks the
    server agreed to report), set once ``async with`` has entered. Iteration ends when the server ends the subscription; leaving the block cancels
    it."""

    def __init__(
        self,
        server: RemoteServer,
        subscriptions: Subscriptions,
        *,
        tools: bool,
        prompts: bool,
        resources: bool,
        resource_uris: Sequence[str],
        buffer: int,
        timeout: float | None,
        task_ids: Sequence[str] = (),
    ) -> None:
        self._server = server
        self._subscriptions = subscriptions
        asked: dict[str, Any] = {
            "tools_list_changed": True if tools else UNSET,
            "prompts_list_changed": True if prompts else UNSET,
            "resources_list_changed": True if resources else UNSET,
            "resource_subscriptions": list(resource_uris) if resource_uris else UNSET,
        }
        self.task_ids = list(task_ids)
        self.requested: Any
        if self.task_ids:
            self.requested = task_listen.ListenFilter(**asked, task_ids=self.task_ids)
        else:
            self.requested = schema_for(LATEST_VERSION).structs.SubscriptionFilter(**asked)
        self.acknowledged: Any = None
        self.subscription_id: RequestId | None = None
        self._send: MemoryObjectSendStream[ChangeEvent]
        self._receive: MemoryObjectReceiveStream[ChangeEvent]
        self._send, self._receive = anyio.create_memory_object_stream[ChangeEvent](buffer)
        self._acked = anyio.Event()
        self._tasks: anyio.abc.TaskGroup | None = None
        self._error: BaseException | None = None
        self._timeout = timeout
        self._overflowed = False
        self._subscribed: list[str] = []

    # -- fed by Subscriptions ---------------------------------------------------------------

    def receive(self, method: str, params: Any) -> None:
        """A notification tagged with this stream's id."""
        if method == ACKNOWLEDGED:
            self.acknowledged = getattr(params, "notifications", None)
            self._acked.set()
            return
        event = _event(method, params)
        if event is not None:
            self._subscriptions.changed(event)
            self.offer(event)

    def offer(self, event: ChangeEvent) -> None:
        if not self._wants(event):
            return
        try:
            self._send.send_nowait(event)
        except anyio.WouldBlock:
            self._overflowed = True  # a slow reader loses events past the buffer; it re-lists anyway
        except (anyio.ClosedResourceError, anyio.BrokenResourceError):
            pass

    def _wants(self, event: ChangeEvent) -> bool:
        wanted = self.acknowledged if self.acknowledged is not None else self.requested
        if isinstance(event, ToolsListChanged):
            return wanted.tools_list_changed is True
        if isinstance(event, PromptsListChanged):
            return wanted.prompts_list_changed is True
        if isinstance(event, ResourcesListChanged):
            return wanted.resources_list_changed is True
        if isinstance(event, TaskChanged):
            ids = getattr(wanted, "task_ids", UNSET)
            return isinstance(ids, list) and event.task.task_id in ids
        uris = wanted.resource_subscriptions
        return isinstance(uris, list) and event.uri in uris

    # -- lifetime -------------------------------------------------------------------------

    async def __aenter__(self) -> Listener:
        server = self._server
        self._tasks = anyio.create_task_group()
        await self._tasks.__aenter__()
        try:
            if server.stateless:
                await self._tasks.start(self._stream)
                with anyio.fail_after(self._timeout if self._timeout is not None else math.inf):
                    await self._acked.wait()
                if self._error is not None:
                    raise self._error
            else:
                await self._session_subscribe()
        except BaseException:
            await self.__aexit__(None, None, None)
            raise
        return self

    async def __aexit__(
        self, exc_type: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> bool | None:
        assert self._tasks is not None
        self._tasks.cancel_scope.cancel()
        try:
            # The stream's task ends by this cancellation (its request is cancelled at the
            # server); what the block raised goes on as itself.
            await self._tasks.__aexit__(None, None, None)
        finally:
            self._subscriptions.remove(self, self.subscription_id)
            self._send.close()
            if self._subscribed:
                with anyio.CancelScope(shield=True), anyio.move_on_after(5.0):
                    for uri in self._subscribed:
                        try:
                            await self._server.unsubscribe_resource(uri)
                        except McpError:
                            pass
        return None

    async def _stream(self, *, task_status: anyio.abc.TaskStatus[None] = anyio.TASK_STATUS_IGNORED) -> None:
        server = self._server
        modern = schema_for(LATEST_VERSION)
        spec: Any = modern.methods.SUBSCRIPTIONS_LISTEN
        params: Any
        if self.task_ids:  # the tasks extension's filter, declaring the extension
            spec = task_listen.subscriptions_listen()
            params = task_listen.ListenRequestParams(
                meta=declaring_tasks(server), notifications=self.requested
            )
        else:
            params = modern.structs.SubscriptionsListenRequestParams(meta={}, notifications=self.requested)
        tag = server.session.connection.next_request_id
        self.subscription_id = tag
        self._subscriptions.add(self, tag)
        task_status.started()
        try:
            try:
                # No time limit: the stream lasts until either side ends it.
                await server.request(spec, params, timeout=math.inf)
            except McpError as exc:
                self._error = exc
            # The stream's notifications came before its end: they reach the reader first.
            await server.session.notifications_handled()
        finally:
            self._acked.set()
            self._send.close()  # the server ended it (a result, or an error): iteration ends

    async def _session_subscribe(self) -> None:
        """A handshake version: the session's own notifications, as far as the server offers
        them; what it does not is left out of :attr:`acknowledged`, as a server's
        acknowledgement would."""
        capabilities = self._server.server_capabilities
        requested = self.requested

        def offered(part: Any, flag: str) -> bool:
            return part is not UNSET and getattr(part, flag, UNSET) is True

        subscribe = offered(capabilities.resources, "subscribe")
        uris = requested.resource_subscriptions if subscribe else UNSET
        self.acknowledged = msgspec.structs.replace(
            requested,
            tools_list_changed=True
            if requested.tools_list_changed is True and offered(capabilities.tools, "list_changed")
            else UNSET,
            prompts_list_changed=True
            if requested.prompts_list_changed is True and offered(capabilities.prompts, "list_changed")
            else UNSET,
            resources_list_changed=True
            if requested.resources_list_changed is True and offered(capabilities.resources, "list_changed")
            else UNSET,
            resource_subscriptions=uris,
        )
        if self.task_ids:  # the extension's notifications: none on a session
            self.acknowledged = msgspec.structs.replace(self.acknowledged, task_ids=UNSET)
        self._subscriptions.add(self, None)
        if isinstance(uris, list):
            for uri in uris:
                await self._server.subscribe_resource(uri)
                self._subscribed.append(uri)

    # -- iteration ------------------------------------------------------------------------

    def __aiter__(self) -> Listener:
        return self

    async def __anext__(self) -> ChangeEvent:
        try:
            return await self._receive.receive()
        except anyio.EndOfStream:
            if self._error is not None:
                error, self._error = self._error, None
                raise error from None
            raise StopAsyncIteration from None
        except anyio.ClosedResourceError:
            raise McpError(CONNECTION_CLOSED, "The listener is closed") from None

    async def next(self, timeout: float | None = None) -> ChangeEvent:
        """The next event, waiting at most ``timeout`` seconds (``TimeoutError``)."""
        with anyio.fail_after(timeout if timeout is not None else math.inf):
            return await self.__anext__()
