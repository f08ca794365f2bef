"""The receiving middleware chain: code that sees each request and notification an endpoint
receives, before its handler, and answers it, refuses it or passes it on.

A middleware subclasses :class:`Middleware` and overrides what it needs::

    class Audit(Middleware):
        async def on_request(self, request: IncomingRequest[Any, Any], call_next: CallNext) -> Any:
            if request.method == "tools/call" and not allowed(request.context):
                raise McpError(INVALID_REQUEST, "not allowed")    # refused: a JSON-RPC error
            started = time.perf_counter()
            result = await call_next(request)                      # passed on
            record(request.method, time.perf_counter() - started)
            return result                                          # (or another result)

    server = Server("demo", "1.0", middleware=[Audit()])      # or server.add_middleware(Audit())

``on_request`` gets the method, its typed params and the handler's context
(:class:`~mcpbind.runtime.context.RequestContext`) in an :class:`IncomingRequest`. It may return
a result of its own without calling ``call_next`` (answered), raise
:class:`~mcpbind.protocol.errors.McpError` (answered with that JSON-RPC error), or await
``call_next(request)`` (the next middleware, the handler last) and return what it returns,
changed or not; ``request.with_params(...)`` passes on other params. ``on_notification``
likewise passes a notification on or drops it (by not calling ``call_next``). Both pass
everything on unchanged unless overridden.

``request.typed(methods.TOOLS_CALL)`` is the request typed as that method's, or ``None`` for
another method: its ``params`` are then a ``CallToolRequestParams`` and ``call_next`` returns
a ``CallToolResult`` to the type checker.

Order: the first middleware registered is the outermost; it sees a request first and its
result last. Middleware sees every request and notification that would reach a handler, also
for a method this side has no handler for (the innermost link then refuses it with -32601 as
usual); not the messages the session answers itself (``initialize``, ``ping``,
``notifications/initialized``, ``/cancelled`` and ``/progress``). A session takes the chain
as it is when the session starts. With no middleware the session calls the handlers directly:
the chain costs nothing then.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Iterator, Mapping, Sequence
from typing import Any, Generic, Protocol, TypeVar, cast, final, overload

from mcpbind.protocol.envelope import params_meta
from mcpbind.protocol.errors import METHOD_NOT_FOUND, McpError
from mcpbind.protocol.jsonrpc import RequestId
from mcpbind.protocol.methods import NotificationSpec, RequestSpec
from mcpbind.runtime.context import RequestContext

__all__ = [
    "CallNext",
    "IncomingNotification",
    "IncomingRequest",
    "Middleware",
    "NotifyNext",
    "chained",
]

P = TypeVar("P")
R = TypeVar("R")
# A method's own params and result types (``typed``), apart from the class's P and R.
P2 = TypeVar("P2")
R2 = TypeVar("R2")
H = TypeVar("H")
T = TypeVar("T")

# The handler types of :mod:`mcpbind.runtime.handlers` (not imported: it imports this module).
_RequestHandler = Callable[[Any, RequestContext[Any]], Awaitable[Any]]
_NotificationHandler = Callable[[Any, RequestContext[Any]], Awaitable[None]]


def _meta_of(params: Any) -> Mapping[str, Any]:
    meta = params_meta(params)
    return meta if isinstance(meta, dict) else {}


@final
class IncomingRequest(Generic[P, R]):
    """A request as middleware sees it: its ``method``, its ``params`` (the method's params
    struct) and ``context``, the :class:`~mcpbind.runtime.context.RequestContext` its handler
    gets. ``P`` and ``R`` are the params and result types (``Any`` until :meth:`typed`)."""

    __slots__ = ("context", "method", "params")

    def __init__(self, method: str, params: P, context: RequestContext[Any]) -> None:
        self.method = method
        self.params = params
        self.context = context

    @property
    def id(self) -> RequestId:
        """The JSON-RPC id the peer gave the request."""
        ident = self.context.request_id
        assert ident is not None
        return ident

    @property
    def meta(self) -> Mapping[str, Any]:
        """The params' ``_meta`` (empty if absent): ``progressToken``, ``traceparent``..."""
        return _meta_of(self.params)

    def typed(self, spec: RequestSpec[P2, R2, Any]) -> IncomingRequest[P2, R2] | None:
        """This request typed as ``spec``'s if it is for that method, else ``None``."""
        if self.method != spec.method:
            return None
        return cast("IncomingRequest[P2, R2]", self)

    def with_params(self, params: P) -> IncomingRequest[P, R]:
        """The same request with other params, to pass on to ``call_next``."""
        return IncomingRequest(self.method, params, self.context)

    def __repr__(self) -> str:
        return f"IncomingRequest({self.method!r}, id={self.context.request_id!r})"


@final
class IncomingNotification(Generic[P]):
    """A notification as middleware sees it: ``method``, ``params`` and ``context`` (whose
    ``request_id`` is ``None``), as for :class:`IncomingRequest`."""

    __slots__ = ("context", "method", "params")

    def __init__(self, method: str, params: P, context: RequestContext[Any]) -> None:
        self.method = method
        self.params = params
        self.context = context

    @property
    def meta(self) -> Mapping[str, Any]:
        """The params' ``_meta`` (empty if absent)."""
        return _meta_of(self.params)

    def typed(self, spec: NotificationSpec[P2, Any]) -> IncomingNotification[P2] | None:
        """This notification typed as ``spec``'s if it is for that method, else ``None``."""
        if self.method != spec.method:
            return None
        return cast("IncomingNotification[P2]", self)

    def with_params(self, params: P) -> IncomingNotification[P]:
        """The same notification with other params, to pass on to ``call_next``."""
        return IncomingNotification(self.method, params, self.context)

    def __repr__(self) -> str:
        return f"IncomingNotification({self.method!r})"


class CallNext(Protocol):
    """The rest of the chain for a request: the next middleware, or the handler; returns the
    result (raises what they raise)."""

    def __call__(self, request: IncomingRequest[P, R], /) -> Awaitable[R]: ...


class NotifyNext(Protocol):
    """The rest of the chain for a notification: the next middleware, or the handler."""

    def __call__(self, notification: IncomingNotification[P], /) -> Awaitable[None]: ...


class Middleware:
    """Base class of middleware: both methods pass everything on; override one or both (see
    the module's docstring). One instance may serve many sessions at once."""

    async def on_request(self, request: IncomingRequest[Any, Any], call_next: CallNext) -> Any:
        """Answer ``request`` (return a result), refuse it (raise ``McpError``) or pass it on
        (``return await call_next(request)``)."""
        return await call_next(request)

    async def on_notification(self, notification: IncomingNotification[Any], call_next: NotifyNext) -> None:
        """Pass ``notification`` on (``await call_next(notification)``) or drop it (return)."""
        await call_next(notification)


# -- the chain ------------------------------------------------------------------------------


class _RequestLink:
    """One middleware, bound to the rest of the chain."""

    __slots__ = ("_next", "_on_request")

    def __init__(self, middleware: Middleware, rest: CallNext) -> None:
        self._on_request = middleware.on_request
        self._next = rest

    def __call__(self, request: IncomingRequest[Any, Any]) -> Awaitable[Any]:
        return self._on_request(request, self._next)


class _NotificationLink:
    __slots__ = ("_next", "_on_notification")

    def __init__(self, middleware: Middleware, rest: NotifyNext) -> None:
        self._on_notification = middleware.on_notification
        self._next = rest

    def __call__(self, notification: IncomingNotification[Any]) -> Awaitable[None]:
        return self._on_notification(notification, self._next)


class _RequestEnd:
    """The innermost link for requests: the handler registered for the method, looked up when
    the request comes (handlers registered later are found), or -32601 without one."""

    __slots__ = ("_handlers",)

    def __init__(self, handlers: Mapping[str, _RequestHandler]) -> None:
        self._handlers = handlers

    async def __call__(self, request: IncomingRequest[Any, Any]) -> Any:
        handler = self._handlers.get(request.method)
        if handler is None:
            raise McpError(METHOD_NOT_FOUND, f"Method not found: {request.method}")
        return await handler(request.params, request.context)


class _NotificationEnd:
    """The innermost link for notifications: the handler for the method, if there is one."""

    __slots__ = ("_handlers",)

    def __init__(self, handlers: Mapping[str, _NotificationHandler]) -> None:
        self._handlers = handlers

    async def __call__(self, notification: IncomingNotification[Any]) -> None:
        handler = self._handlers.get(notification.method)
        if handler is not None:
            await handler(notification.params, notification.context)


class _Chained(Mapping[str, H]):
    """The handler mapping a session gets when middleware is registered: ``get`` gives the
    chain's entry for every method, so that middleware sees requests (or notifications) for
    methods without a handler too; the rest of the mapping is the handlers' own."""

    __slots__ = ("_entry", "_handlers")

    def __init__(self, handlers: Mapping[str, Any], entry: H) -> None:
        self._handlers = handlers
        self._entry = entry

    def __getitem__(self, method: str) -> H:
        self._handlers[method]  # KeyError for a method without a handler
        return self._entry

    def __iter__(self) -> Iterator[str]:
        return iter(self._handlers)

    def __len__(self) -> int:
        return len(self._handlers)

    @overload
    def get(self, method: str, /) -> H | None: ...
    @overload
    def get(self, method: str, /, default: H | T) -> H | T: ...
    def get(self, method: str, /, default: object = None) -> object:
        return self._entry


def _overrides(middleware: Middleware, name: str) -> bool:
    return getattr(type(middleware), name) is not getattr(Middleware, name)


def chained(
    middleware: Sequence[Middleware],
    request_handlers: Mapping[str, _RequestHandler],
    notification_handlers: Mapping[str, _NotificationHandler],
) -> tuple[Mapping[str, _RequestHandler], Mapping[str, _NotificationHandler]]:
    """The handler mappings for a session: the given ones (used as they are, not copied) when
    no middleware overrides ``on_request`` (``on_notification``), else views that run each
    message through the chain, ``middleware[0]`` outermost, the handler innermost."""
    for_requests = [m for m in middleware if _overrides(m, "on_request")]
    for_notifications = [m for m in middleware if _overrides(m, "on_notification")]
    requests: Mapping[str, _RequestHandler] = request_handlers
    notifications: Mapping[str, _NotificationHandler] = notification_handlers
    if for_requests:
        rest: CallNext = _RequestEnd(request_handlers)
        for m in reversed(for_requests):
            rest = _RequestLink(m, rest)
        first = rest

        def enter_request(params: Any, ctx: RequestContext[Any]) -> Awaitable[Any]:
            return first(IncomingRequest(ctx.method, params, ctx))

        requests = _Chained(request_handlers, enter_request)
    if for_notifications:
        rest_n: NotifyNext = _NotificationEnd(notification_handlers)
        for m in reversed(for_notifications):
            rest_n = _NotificationLink(m, rest_n)
        first_n = rest_n

        def enter_notification(params: Any, ctx: RequestContext[Any]) -> Awaitable[None]:
            return first_n(IncomingNotification(ctx.method, params, ctx))

        notifications = _Chained(notification_handlers, enter_notification)
    return requests, notifications
