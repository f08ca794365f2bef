"""The handlers one side registers (:class:`HandlerRegistry`), their types, and the methods
the session answers itself, for which no handler runs (:data:`HANDLED_BY_SESSION`).

The registry holds the side's middleware too (:mod:`mcpbind.runtime.middleware`); a session
gets its handlers from :meth:`HandlerRegistry.session_handlers`, run through the middleware
when there is any."""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Iterable, Mapping
from typing import Any, Generic, Literal, TypeVar, cast

from mcpbind.protocol.methods import NotificationSpec, RequestSpec
from mcpbind.runtime.context import RequestContext
from mcpbind.runtime.middleware import Middleware, chained

__all__ = ["HANDLED_BY_SESSION", "HandlerRegistry", "NotificationHandler", "RequestHandler"]

P = TypeVar("P")
R = TypeVar("R")
# What the handlers of a registry receive (ToServer for a server), and the context they get.
ReceivesT = TypeVar("ReceivesT")
ContextT = TypeVar("ContextT")

# The methods the session (its connection) answers or acts on itself: no handler of them runs.
HANDLED_BY_SESSION: frozenset[str] = frozenset(
    {
        "initialize",
        "ping",
        "notifications/initialized",
        "notifications/cancelled",
        "notifications/progress",
    }
)

RequestHandler = Callable[[Any, RequestContext[Any]], Awaitable[Any]]
NotificationHandler = Callable[[Any, RequestContext[Any]], Awaitable[None]]
_Handlers = tuple[Mapping[str, RequestHandler], Mapping[str, NotificationHandler]]


class HandlerRegistry(Generic[ReceivesT, ContextT]):
    """The handlers one side registers: :class:`~mcpbind.server.server.Server` and
    :class:`~mcpbind.client.client.Client` both are one. ``role`` says which side, so that only
    what the peer may send can be handled; the type parameters say it to the type checker
    (what the side receives, :class:`~mcpbind.protocol.methods.ToServer` for a server, and the context
    its handlers get).

    ``middleware`` (see :mod:`mcpbind.runtime.middleware`) sees what the peer sends before the
    handlers do, the first one outermost; :meth:`add_middleware` adds one inside those
    registered before. Sessions started later run through it."""

    def __init__(self, role: Literal["client", "server"], middleware: Iterable[Middleware] = ()) -> None:
        self.role = role
        self.request_handlers: dict[str, RequestHandler] = {}
        self.notification_handlers: dict[str, NotificationHandler] = {}
        self.middleware: list[Middleware] = list(middleware)
        # The chain last built, and the middleware it was built from.
        self._chain: tuple[tuple[Middleware, ...], _Handlers] | None = None

    def add_middleware(self, middleware: Middleware) -> None:
        """Add ``middleware`` as the innermost so far: it sees what those added before pass on.
        Sessions already running keep the chain they started with."""
        self.middleware.append(middleware)

    def session_handlers(self) -> _Handlers:
        """The request and notification handlers for a new session: the registry's own mappings
        (shared, not copied) without middleware, else views through the middleware chain."""
        if not self.middleware:
            return self.request_handlers, self.notification_handlers
        built = self._chain
        if built is None or not _same(built[0], self.middleware):
            key = tuple(self.middleware)
            built = self._chain = key, chained(key, self.request_handlers, self.notification_handlers)
        return built[1]

    def _peer_sends(self, direction: Any) -> bool:
        return bool(direction.sent_by_client() if self.role == "server" else direction.sent_by_server())

    def on(
        self, spec: RequestSpec[P, R, ReceivesT]
    ) -> Callable[[Callable[[P, ContextT], Awaitable[R]]], Callable[[P, ContextT], Awaitable[R]]]:
        """Decorator: handle the request ``spec``, one the peer sends; mypy checks the handler's
        params and result types against the method's, and that the peer sends it. ``ValueError``
        for a method this side does not receive, or one the session answers itself
        (:data:`HANDLED_BY_SESSION`)."""
        if not self._peer_sends(spec.direction) or spec.embedded:
            raise ValueError(f"a {self.role} does not receive {spec.method}")
        _refuse_handled_by_session(spec.method)

        def register(
            handler: Callable[[P, ContextT], Awaitable[R]],
        ) -> Callable[[P, ContextT], Awaitable[R]]:
            self.request_handlers[spec.method] = cast(RequestHandler, handler)
            return handler

        return register

    def on_notification(
        self, spec: NotificationSpec[P, ReceivesT]
    ) -> Callable[[Callable[[P, ContextT], Awaitable[None]]], Callable[[P, ContextT], Awaitable[None]]]:
        """Decorator: handle the notification ``spec``, one the peer sends (``ValueError`` as
        for :meth:`on`)."""
        if not self._peer_sends(spec.direction):
            raise ValueError(f"a {self.role} does not receive {spec.method}")
        _refuse_handled_by_session(spec.method)

        def register(
            handler: Callable[[P, ContextT], Awaitable[None]],
        ) -> Callable[[P, ContextT], Awaitable[None]]:
            self.notification_handlers[spec.method] = cast(NotificationHandler, handler)
            return handler

        return register


def _same(built: tuple[Middleware, ...], current: list[Middleware]) -> bool:
    """Whether the chain ``built`` is of exactly the ``current`` middleware objects."""
    return len(built) == len(current) and all(a is b for a, b in zip(built, current, strict=True))


def _refuse_handled_by_session(method: str) -> None:
    if method in HANDLED_BY_SESSION:
        raise ValueError(f"{method} is answered by the session itself: a handler for it would never run")
