"""The server endpoint: typed handlers for what clients send, run over any transport."""

from __future__ import annotations

from collections.abc import AsyncIterator, Awaitable, Callable, Iterable, Mapping, Sequence
from contextlib import AbstractAsyncContextManager, asynccontextmanager
from typing import TYPE_CHECKING, Any, Literal, TypeVar, cast

import anyio

from mcpbind import types
from mcpbind.protocol.connection import FULL_DELIVERY, Connection, Delivery
from mcpbind.protocol.errors import METHOD_NOT_FOUND, McpError
from mcpbind.protocol.methods import RequestSpec, ToServer
from mcpbind.runtime.context import RequestContext
from mcpbind.runtime.handlers import HandlerRegistry
from mcpbind.runtime.lifespan import Lifespan
from mcpbind.runtime.middleware import Middleware
from mcpbind.runtime.request_state import RequestStateSigner
from mcpbind.runtime.rounds import RoundsPolicy
from mcpbind.runtime.session import Session, Spawn
from mcpbind.server.broadcast import Broadcasts
from mcpbind.server.caching import DEFAULT_HINT, CacheHint, encoded_hints
from mcpbind.server.capabilities import implied_capabilities
from mcpbind.server.catalog import Catalog
from mcpbind.server.catalog_view import CatalogView
from mcpbind.server.completion import CompletionFn, completion_handler
from mcpbind.server.discover import discover_handler
from mcpbind.server.fanout import sharing
from mcpbind.server.handler_objects import handlers_of
from mcpbind.server.hosting import Hosting
from mcpbind.server.listen import Listeners
from mcpbind.server.registering import RegistersHandler
from mcpbind.server.scopes import RequiredScopes
from mcpbind.server.tasks.support import TaskSupport
from mcpbind.store.base import Store
from mcpbind.transports.base import Transport
from mcpbind.versions import SUPPORTED_VERSIONS

if TYPE_CHECKING:
    from mcpbind.server.handler_objects import HandlerObject

__all__ = ["Server"]

methods = types.methods
P = TypeVar("P")
R = TypeVar("R")
F = TypeVar("F", bound=Callable[..., Any])


class Server(HandlerRegistry[ToServer, RequestContext], CatalogView, Hosting):
    """An MCP server: register handlers, then :meth:`run` it over a transport.

    Handlers take the method's params struct and a :class:`RequestContext` and return its
    result struct; both types come from the method table, so mypy checks them::

        server = Server("demo", "1.0")

        @server.on(methods.TOOLS_CALL)
        async def call_tool(params: types.CallToolRequestParams, ctx: RequestContext) -> types.CallToolResult:
            ...

    An object whose class subclasses the generated protocols of the handlers it implements
    (``HandlesToolsCall``... in ``mcpbind.types.stubs``) can be registered whole
    with :meth:`add_handlers`.
    Capabilities are derived from the registered handlers unless given.

    ``logging``: whether the server sends log messages (``ctx.log``,
    :func:`~mcpbind.server.log_bridge.forward_logging`) and so declares the ``logging`` capability
    and answers ``logging/setLevel``. ``None`` (the default): only when a ``logging/setLevel``
    handler of its own is registered. Without the capability, ``ctx.log`` raises and
    ``logging/setLevel`` gets -32601, as the specification asks.

    ``name``, ``version``, ``title``, ``description``, ``icons`` and ``website_url`` make the
    ``serverInfo`` sent at initialize; a client that negotiated an older protocol version gets
    only the fields its version has (``title`` since 2025-06-18, the other three since
    2025-11-25), as for the ``title`` and ``icons`` of tools, resources and prompts.

    ``max_uri_length``: the longest URI that ``resources/read`` and ``resources/subscribe``
    accept for the resources registered with :meth:`resource` (8192 characters by default); a
    longer one is refused with a -32602 error before any template is matched.

    ``shutdown_grace_period``: once a client closes its side (the end of stdin), the requests
    it sent before still run and are answered for up to this many seconds; then those still
    running are cancelled and answered with a ``CONNECTION_CLOSED`` error, and :meth:`run`
    returns (see :class:`~mcpbind.runtime.session.Session`).

    Messages to every session (list changes, :meth:`resource_updated`) never wait for any
    client: each session's transport takes its copy at once if it can, or it waits in a queue
    of that session, sent by a task of its own. ``max_queued_bytes`` (1 MiB) of them may wait
    per session; past that the oldest are dropped, with a warning (see
    :meth:`Session.send_soon <mcpbind.runtime.session.Session.send_soon>`). The HTTP servers'
    transports take them in line: they wait for no client either, and have bounds of their
    own for a client that does not read (it is cut off or disconnected).

    ``middleware``: what sees each request and notification before the handlers, the first
    outermost (see :mod:`mcpbind.runtime.middleware`; :meth:`add_middleware` adds more).

    ``versions``: the protocol versions served, the stateless 2026-07-28 among them by
    default; every request of a stateless version is served on its own, on the same transports
    and endpoints as the sessions of the older ones. ``cache`` is the caching hint
    (``ttlMs``, ``cacheScope``) their cacheable results carry (``server/discover``,
    ``tools/list``, ``prompts/list``, ``resources/list``, ``resources/templates/list``,
    ``resources/read``): 0 ms and ``"private"`` by default; ``cache_hints`` sets one per method.

    Multi round-trip requests (2026-07-28): a handler of ``tools/call``, ``prompts/get`` or
    ``resources/read`` that asks the client something (``ctx.elicit``...) on a stateless
    request ends the round with an ``InputRequiredResult``, and is run again from the start
    when the client retries with the answers (see :mod:`mcpbind.runtime.rounds`). Its
    ``requestState`` is signed (HMAC-SHA256) with ``request_state_key`` (at least 32 random
    bytes): give every worker serving the same clients the same key. ``None``: a random key
    made once per process, which no other worker (nor this one after a restart) accepts.
    A request state expires ``request_state_ttl`` seconds after it is issued; a request may
    end with input required at most ``max_input_rounds`` times. ``request_state_principal``:
    who sends a request, from its context (an authenticated user's id, say, read from what
    the ASGI authentication set): a request state issued to one is refused to another.
    ``input_rounds=False``: the handlers answer such requests themselves (a proxy forwarding
    them to a server that asks its own questions), returning the ``InputRequiredResult``.

    ``raw_params``: the request methods whose handlers get their params as received, a
    ``msgspec.Raw`` of JSON nothing decoded (a proxy forwards them); ``ctx`` still reads their
    ``_meta`` (progress token, the stateless envelope). A handler may return a ``msgspec.Raw``
    result too: it is sent as it is.

    ``lifespan``: called with the server when it starts serving, an async context manager
    whose value handlers read as ``ctx.lifespan_state`` (see :mod:`mcpbind.runtime.lifespan`
    and :meth:`serving`).

    Stateless clients learn of list changes and resource updates on ``subscriptions/listen``
    streams (see :mod:`mcpbind.server.listen`), never from plain notifications; each stream
    keeps up to ``max_listen_backlog`` changes it could not send yet (then drops the oldest).
    Streams end with a result when their session's input ends, the session is ended, or the
    server stops serving (:meth:`end_listen_streams`).
    """

    def __init__(
        self,
        name: str,
        version: str,
        *,
        title: str | None = None,
        description: str | None = None,
        icons: Sequence[types.Icon] | None = None,
        website_url: str | None = None,
        instructions: str | None = None,
        capabilities: types.ServerCapabilities | None = None,
        logging: bool | None = None,
        versions: tuple[str, ...] = SUPPORTED_VERSIONS,
        request_timeout: float | None = 60.0,
        max_concurrent_requests: int = 64,
        max_pending_requests: int = 1024,
        expose_internal_errors: bool = False,
        page_size: int = 100,
        max_uri_length: int = 8192,
        shutdown_grace_period: float = 5.0,
        max_queued_bytes: int = 1 << 20,
        middleware: Iterable[Middleware] = (),
        lifespan: Callable[[Server], AbstractAsyncContextManager[Any]] | None = None,
        cache: CacheHint = DEFAULT_HINT,
        cache_hints: Mapping[str, CacheHint] | None = None,
        request_state_key: bytes | None = None,
        request_state_ttl: float = 600.0,
        max_input_rounds: int = 8,
        request_state_principal: Callable[[RequestContext], str | None] | None = None,
        max_listen_backlog: int = 1024,
        tasks: TaskSupport | None = None,
        raw_params: Iterable[str] = (),
        input_rounds: bool = True,
    ) -> None:
        super().__init__("server", middleware)
        self._lifespan = Lifespan(lifespan, self) if lifespan is not None else None
        # The tools, resources and prompts of the decorators, and the handlers answering from them.
        self._catalog = Catalog(page_size=page_size, max_uri_length=max_uri_length)
        # Listings answer encoded pages kept between calls, typed ones where middleware may read them.
        self._catalog.typed_results = lambda: bool(self.middleware)
        self.required_scopes = RequiredScopes()  # (``scopes=`` of the decorators: mcpbind.server.auth)
        self._listeners = Listeners(self._catalog.check_uri, max_backlog=max_listen_backlog)
        self._broadcasts = Broadcasts(self._catalog.check_uri, self._listeners)
        # The broadcasts' own set and dict (never replaced): the sessions served, each one's
        # subscribed URIs.
        self._sessions = self._broadcasts.sessions
        self._subscriptions = self._broadcasts.subscriptions
        self.request_handlers[methods.LOGGING_SET_LEVEL.method] = self._set_level
        # Stateless versions: the caching hints of each cacheable result (checked now).
        self._cache_hints = encoded_hints(cache, cache_hints or {})
        # Tools run as tasks (``@server.tool(task=...)``): how, and the extensions declared.
        self.tasks = tasks if tasks is not None else TaskSupport()
        self.tasks.on_status = self._broadcasts.task_changed
        self._listeners.tasks = self.tasks
        self.extensions: dict[str, Any] = {}
        self.request_handlers["server/discover"] = discover_handler(cache, self.extensions)
        # Multi round-trip requests: how their request states are sealed, how many rounds.
        self.rounds_policy = RoundsPolicy(
            RequestStateSigner(request_state_key, request_state_ttl),
            max_input_rounds,
            request_state_principal,
        )
        self._own_request_state_key = request_state_key is not None
        self.request_handlers["subscriptions/listen"] = self._listeners.listen
        self.info = types.Implementation(
            name=name,
            version=version,
            title=title if title is not None else types.UNSET,
            description=description if description is not None else types.UNSET,
            icons=list(icons) if icons is not None else types.UNSET,
            website_url=website_url if website_url is not None else types.UNSET,
        )
        self.instructions = instructions
        self.capabilities = capabilities
        self.logging = logging
        self.versions = versions
        self.request_timeout = request_timeout
        self.max_concurrent_requests = max_concurrent_requests
        self.max_pending_requests = max_pending_requests
        self.expose_internal_errors = expose_internal_errors
        self.shutdown_grace_period = shutdown_grace_period
        self.max_queued_bytes = max_queued_bytes
        self.raw_params = frozenset(raw_params)
        self.input_rounds = input_rounds

    # -- tools from functions ---------------------------------------------------------------

    def tool(
        self,
        name: str | None = None,
        *,
        title: str | None = None,
        description: str | None = None,
        annotations: types.ToolAnnotations | None = None,
        meta: dict[str, Any] | None = None,
        input_schema: Mapping[str, Any] | None = None,
        output_schema: Mapping[str, Any] | None = None,
        icons: Sequence[types.Icon] | None = None,
        scopes: Iterable[str] | str | None = None,
        task: bool | Literal["optional", "required"] = False,
    ) -> Callable[[F], F]:
        """Decorator: make a function (sync or async) a tool; see :mod:`mcpbind.server.tools`.

        The function is returned unchanged, so it stays callable with its own signature.

        ``input_schema`` is advertised as the tool's ``inputSchema`` exactly as given, instead
        of the schema derived from the signature (for keywords such as ``$schema``, ``$defs``
        or ``additionalProperties`` that the derived one lacks). Arguments are still validated
        by decoding them into the parameters, and a top-level ``"additionalProperties": false``
        makes unknown arguments an error. Its ``properties`` must agree with the parameters:
        ``ValueError`` at registration otherwise. ``output_schema`` likewise replaces the
        derived ``outputSchema``; the function then returns the structured content itself (a
        mapping, struct or dataclass), or a ``CallToolResult``.

        ``title`` (a display name) and ``icons`` (``types.Icon(src=..., mime_type=...,
        sizes=[...], theme=...)``) are sent to clients whose protocol version has them
        (``title`` since 2025-06-18, ``icons`` since 2025-11-25) and left out for older ones.
        ``scopes``: the OAuth scopes a caller's token needs, checked before the function runs
        (403 otherwise) when the server is protected (:mod:`mcpbind.server.auth`).
        ``task``: ``True`` or ``"optional"``, it runs as a task when the client can follow
        one; ``"required"``, only as a task (see :mod:`mcpbind.server.tasks.support`, and
        ``Server(tasks=TaskSupport(...))`` for the store and limits).
        """

        def register(fn: F) -> F:
            from mcpbind.server.tools import FunctionTool

            self._catalog.claim(self.request_handlers, "tool")
            made = FunctionTool(
                fn,
                name or fn.__name__,
                title=title,
                description=description,
                annotations=annotations,
                meta=meta,
                input_schema=input_schema,
                output_schema=output_schema,
                icons=icons,
                task_support="optional" if task is True else (task or None),
            )
            if made.task_support is not None:
                self.tasks.attach(self.request_handlers, self.extensions)
                self._catalog.task_calls = self.tasks.call_tool
            self.required_scopes.set("tool", made.name, scopes)
            self._catalog.add_tool(made)
            self._broadcasts.changed_soon(methods.NOTIFICATIONS_TOOLS_LIST_CHANGED)
            return fn

        return register

    # -- resources and prompts from functions -------------------------------------------------

    def resource(
        self,
        uri: str,
        *,
        name: str | None = None,
        title: str | None = None,
        description: str | None = None,
        mime_type: str | None = None,
        annotations: types.Annotations | None = None,
        meta: dict[str, Any] | None = None,
        icons: Sequence[types.Icon] | None = None,
        scopes: Iterable[str] | str | None = None,
    ) -> Callable[[F], F]:
        """Decorator: a resource at ``uri``, or resource template when ``uri`` holds ``{...}``
        (RFC 6570); see :mod:`mcpbind.server.resources`. ``title``, ``icons``, ``scopes`` as for :meth:`tool`.

        A template that cannot be matched unambiguously (see :mod:`mcpbind.server.uri_template`) is a
        ``ValueError`` naming it."""

        def register(fn: F) -> F:
            from mcpbind.server.resources import FunctionResource, FunctionResourceTemplate
            from mcpbind.server.uri_template import UriTemplate

            self._catalog.claim(self.request_handlers, "resource")

            options: dict[str, Any] = {
                "name": name or fn.__name__,
                "title": title,
                "description": description,
                "mime_type": mime_type,
                "annotations": annotations,
                "meta": meta,
                "icons": list(icons) if icons is not None else None,
            }
            self.required_scopes.set("template" if "{" in uri else "resource", uri, scopes)
            if "{" in uri:
                self._catalog.add_resource_template(
                    FunctionResourceTemplate(fn, template=UriTemplate(uri), **options)
                )
            else:
                self._catalog.add_resource(FunctionResource(fn, uri=uri, **options))
            self._broadcasts.changed_soon(methods.NOTIFICATIONS_RESOURCES_LIST_CHANGED)
            # Subscriptions may be handled by hand (with on()), registered before or after.
            self.request_handlers.setdefault(methods.RESOURCES_SUBSCRIBE.method, self._broadcasts.subscribe)
            self.request_handlers.setdefault(
                methods.RESOURCES_UNSUBSCRIBE.method, self._broadcasts.unsubscribe
            )
            return fn

        return register

    def prompt(
        self,
        name: str | None = None,
        *,
        title: str | None = None,
        description: str | None = None,
        meta: dict[str, Any] | None = None,
        icons: Sequence[types.Icon] | None = None,
        scopes: Iterable[str] | str | None = None,
    ) -> Callable[[F], F]:
        """Decorator: a prompt whose arguments are the function's parameters; see
        :mod:`mcpbind.server.prompts`. ``title``, ``icons``, ``scopes`` as for :meth:`tool`."""

        def register(fn: F) -> F:
            from mcpbind.server.prompts import FunctionPrompt

            self._catalog.claim(self.request_handlers, "prompt")

            made = FunctionPrompt(
                fn,
                name or fn.__name__,
                title=title,
                description=description,
                meta=meta,
                icons=list(icons) if icons is not None else None,
            )
            self.required_scopes.set("prompt", made.name, scopes)
            self._catalog.add_prompt(made)
            self._broadcasts.changed_soon(methods.NOTIFICATIONS_PROMPTS_LIST_CHANGED)
            return fn

        return register

    # -- completion, logging, list changes ---------------------------------------------------

    def completion(self) -> Callable[[CompletionFn], CompletionFn]:
        """Decorator: answer ``completion/complete`` for prompt arguments and template variables.

        The function gets the reference (prompt or resource template), the argument's name, the
        value typed so far and the arguments already resolved (``context.arguments``), and
        returns the candidate values; the first 100 are sent with ``total`` and ``hasMore``.
        """

        def register(fn: CompletionFn) -> CompletionFn:
            self.request_handlers[methods.COMPLETION_COMPLETE.method] = completion_handler(fn)
            return fn

        return register

    async def _set_level(self, params: types.SetLevelRequestParams, ctx: RequestContext) -> types.Result:
        if getattr(ctx.session.connection.capabilities, "logging", types.UNSET) is types.UNSET:
            raise McpError(METHOD_NOT_FOUND, f"Method not found: {ctx.method}")
        ctx.session.log_level = params.level
        return types.Result()

    async def tools_changed(self) -> None:
        """Tell every connected client that the tool list changed (for changes made otherwise
        than by adding or removing a tool, which tells them by itself), waiting for none of
        them (see the class's docstring). ``prompts_changed`` and ``resources_changed`` too."""
        await self._broadcasts.broadcast(methods.NOTIFICATIONS_TOOLS_LIST_CHANGED)

    async def prompts_changed(self) -> None:
        await self._broadcasts.broadcast(methods.NOTIFICATIONS_PROMPTS_LIST_CHANGED)

    async def resources_changed(self) -> None:
        await self._broadcasts.broadcast(methods.NOTIFICATIONS_RESOURCES_LIST_CHANGED)

    async def resource_updated(self, uri: str) -> None:
        """Send ``notifications/resources/updated`` to every session subscribed to ``uri``,
        waiting for none of them (see the class's docstring)."""
        await self._broadcasts.resource_updated(uri)

    def remove_tool(self, name: str) -> None:
        """Remove a tool; connected clients are told. ``KeyError`` if there is none.

        Like adding a tool, prompt or resource while clients are connected (and removing one),
        call it from the event loop (a handler or a task), where the
        ``notifications/.../list_changed`` can be queued at once.
        """
        self._catalog.remove_tool(name)
        self._broadcasts.changed_soon(methods.NOTIFICATIONS_TOOLS_LIST_CHANGED)

    def tool_input_schema(self, name: str) -> Mapping[str, Any] | None:
        """The ``inputSchema`` of the tool ``name`` made with :meth:`tool`, or ``None`` (the
        Streamable HTTP app checks the ``Mcp-Param-*`` headers its ``x-mcp-header``
        annotations ask for)."""
        tool = self._catalog.tools.get(name)
        return None if tool is None else tool.input_schema

    def remove_prompt(self, name: str) -> None:
        """Remove a prompt; connected clients are told. ``KeyError`` if there is none."""
        self._catalog.remove_prompt(name)
        self._broadcasts.changed_soon(methods.NOTIFICATIONS_PROMPTS_LIST_CHANGED)

    def remove_resource(self, uri: str) -> None:
        """Remove the resource at ``uri``; connected clients are told. ``KeyError`` if there is none.

        Subscriptions to ``uri`` stay: a resource added again at the same URI is still watched.
        """
        self._catalog.remove_resource(uri)
        self._broadcasts.changed_soon(methods.NOTIFICATIONS_RESOURCES_LIST_CHANGED)

    def remove_resource_template(self, uri_template: str) -> None:
        """Remove the resource template registered as ``uri_template``; connected clients are
        told. ``KeyError`` if there is none."""
        self._catalog.remove_resource_template(uri_template)
        self._broadcasts.changed_soon(methods.NOTIFICATIONS_RESOURCES_LIST_CHANGED)

    # -- registration ---------------------------------------------------------------------

    def on(self, spec: RequestSpec[P, R, ToServer]) -> RegistersHandler[P, R]:
        """Decorator: handle the request ``spec`` (see :meth:`HandlerRegistry.on`); a method only
        a client receives (``methods.ROOTS_LIST``) is a type error, and ``ValueError`` at run time.
        The handler returns the method's result, or that result already encoded
        (``Encoded[R]``, :mod:`mcpbind.protocol.encoded`), sent as it is.

        ``ValueError`` for a method the tools, resources or prompts registered with the
        decorators answer (``tools/list``, ``tools/call``, ``resources/list``,
        ``resources/templates/list``, ``resources/read``, ``prompts/list``, ``prompts/get``):
        those are answered either by the decorators or by hand, not both.
        """
        decorate = super().on(spec)

        def register(handler: Callable[[P, RequestContext], Awaitable[Any]]) -> Any:
            self._catalog.check_free(self.request_handlers, spec.method)
            return decorate(handler)

        return cast("RegistersHandler[P, R]", register)

    def add_handlers(self, handlers: HandlerObject) -> None:
        """Register every ``on_<method>`` of ``handlers``, whose class subclasses the protocols
        (``mcpbind.types.stubs``) of the handlers it implements::

            class Tools(HandlesToolsList[RequestContext], HandlesToolsCall[RequestContext]):
                async def on_tools_list(
                    self, params: types.PaginatedRequestParams, ctx: RequestContext, /
                ) -> types.ListToolsResult: ...

                async def on_tools_call(
                    self, params: types.CallToolRequestParams, ctx: RequestContext, /
                ) -> types.CallToolResult: ...

            server.add_handlers(Tools())

        mypy checks each ``on_<method>`` against its protocol where the class is defined, and
        checks that the object given here implements at least one of them. The same is
        checked here, when it is registered, for code mypy does not see: ``TypeError`` naming
        the attribute for an ``on_...`` that names no method a server receives (or one the
        session answers itself: ``initialize``, ``ping``, ``notifications/initialized``,
        ``/cancelled`` and ``/progress``), that is not an ``async`` callable taking ``(params,
        ctx)``, or whose class does not subclass that method's protocol (so its signature was
        never type-checked). ``ValueError`` if there is no ``on_<method>`` at all, or if one is
        for a method the decorators answer, as for :meth:`on`. Nothing is registered unless
        every one passes.
        """
        found = handlers_of(handlers)
        if not found:
            raise ValueError(f"{type(handlers).__name__} has no on_<method> handlers")
        for method in found:
            self._catalog.check_free(self.request_handlers, method)
        for method, bound in found.items():
            if method in methods.REQUESTS:
                self.request_handlers[method] = bound
            else:
                self.notification_handlers[method] = bound

    def server_capabilities(self, *, delivery: Delivery = FULL_DELIVERY) -> types.ServerCapabilities:
        """The capabilities declared at initialize: the given ones, else those the handlers imply,
        less what ``delivery`` (what the transport can carry) could never bring to the client:
        ``listChanged`` and ``resources.subscribe`` without a way for messages unrelated to a
        request, ``logging`` without one for what a handler sends (see :class:`Delivery`).
        """
        capabilities = self.capabilities if self.capabilities is not None else self._implied_capabilities()
        return delivery.declarable(capabilities)

    def _implied_capabilities(self) -> types.ServerCapabilities:
        logs = self.logging
        if logs is None:  # a setLevel handler of the server's own says it logs
            logs = (
                self.request_handlers.get(methods.LOGGING_SET_LEVEL.method, self._set_level)
                != self._set_level
            )
        # The lists answered by the catalog, which tells of their changes.
        lists = (methods.TOOLS_LIST.method, methods.RESOURCES_LIST.method, methods.PROMPTS_LIST.method)
        list_changed = {method for method in lists if self._catalog.answers(self.request_handlers, method)}
        return implied_capabilities(self.request_handlers, logs=logs, list_changed=list_changed)

    # -- running --------------------------------------------------------------------------

    def connection(self, *, delivery: Delivery = FULL_DELIVERY) -> Connection:
        """A new server side of a connection over a transport that carries ``delivery`` (all
        by default): its capabilities say so (see :meth:`server_capabilities`), and it refuses
        the requests to the client that could not reach it or be answered."""
        return Connection(
            "server",
            self.info,
            self.server_capabilities(delivery=delivery),
            instructions=self.instructions,
            versions=self.versions,
            delivery=delivery,
            cache_hints=self._cache_hints,
            raw_params=self.raw_params,
        )

    def session(self, transport: Transport, connection: Connection | None = None) -> Session:
        """A session over ``transport`` (use as ``async with``); :meth:`run` is the usual way.
        ``connection``: one to use instead of a new :meth:`connection`."""
        request_handlers, notification_handlers = self.session_handlers()
        session = Session(
            transport,
            connection if connection is not None else self.connection(),
            request_handlers=request_handlers,
            notification_handlers=notification_handlers,
            request_timeout=self.request_timeout,
            max_concurrent_requests=self.max_concurrent_requests,
            max_pending_requests=self.max_pending_requests,
            expose_internal_errors=self.expose_internal_errors,
            shutdown_grace_period=self.shutdown_grace_period,
            max_queued_bytes=self.max_queued_bytes,
        )
        session.lifespan = self._lifespan
        session.rounds_policy = self.rounds_policy
        session.serves_rounds = self.input_rounds
        session.on_input_end = self._listeners.end_session
        return session

    def inline_session(
        self,
        transport: Transport,
        *,
        spawn: Spawn | None = None,
        register: bool = True,
        connection: Connection | None = None,
    ) -> Session:
        """A session driven by whoever receives its messages, with no task of its own (see
        :meth:`Session.start_inline`); ``spawn`` is what :meth:`Session.send_soon` uses. With
        ``register`` it is one of this server's sessions (list-change broadcasts, resource
        subscriptions) until :meth:`end_session`. ``connection`` as for :meth:`session`."""
        session = self.session(transport, connection)
        session.start_inline(spawn)
        if register:
            self._broadcasts.add(session)
        return session

    def subscriptions_of(self, session: Session) -> frozenset[str]:
        """The URIs ``session`` subscribed to (``resources/subscribe``)."""
        return frozenset(self._subscriptions.get(session, ()))

    def restore_subscriptions(self, session: Session, uris: Iterable[str]) -> None:
        """``session`` is subscribed to ``uris``, and to nothing else (a worker sharing the
        session with others takes them from the store)."""
        wanted = set(uris)
        if wanted:
            self._subscriptions[session] = wanted
        else:
            self._subscriptions.pop(session, None)

    async def end_session(self, session: Session) -> None:
        """End a session made by :meth:`inline_session`: its handlers are cancelled, its
        transport closed, and the server forgets it. Its listen streams end first, with a result
        (for up to a second)."""
        self._broadcasts.forget(session)
        await self._listeners.close(session)
        await session.end()

    async def end_listen_streams(self, timeout: float = 1.0) -> None:
        """End every open ``subscriptions/listen`` stream gracefully: each sends what it has
        pending, then its result; waits up to ``timeout`` seconds for them. :meth:`serving`
        does this when it ends; a host that ends sessions itself does it first."""
        with anyio.CancelScope(shield=True):
            await self._listeners.close(timeout=timeout)

    @asynccontextmanager
    async def serving(self, store: Store | None = None) -> AsyncIterator[None]:
        """The server serves during the block: its lifespan (``Server(lifespan=...)``) is
        entered, or joined if it is already (see :mod:`mcpbind.runtime.lifespan`). :meth:`run`
        and the ASGI lifespan of :meth:`http_app` do this themselves; use it around several
        :meth:`run` calls that share one lifespan.

        ``store`` (open): the server is one of the workers sharing it (see
        :mod:`mcpbind.server.fanout`): its list changes and resource updates reach the other
        workers' clients and theirs its own, its ``requestState`` key is the store's
        (:func:`~mcpbind.store.shared_key`) unless it was given ``request_state_key``, and its
        tasks are kept in the store unless its :class:`TaskSupport` was given a task store
        (see :meth:`TaskRunner.sharing <mcpbind.server.tasks.runner.TaskRunner.sharing>`).
        :class:`~mcpbind.store.StoreUnavailable` if the store cannot be reached at start."""
        if store is not None:
            signer = None if self._own_request_state_key else self.rounds_policy.signer
            async with sharing(self._broadcasts, store, signer), self.tasks.sharing(store), self.serving():
                yield
            return
        if self._lifespan is None:
            async with self.tasks.serving():
                yield
            return
        try:
            async with self._lifespan.serving(), self.tasks.serving():
                yield
        finally:
            if not self._lifespan.running:  # the lifespan ended: so do the listen streams left
                await self.end_listen_streams()

    async def run(self, transport: Transport) -> None:
        """Serve one client over ``transport`` until it closes the connection and the requests it
        sent before are answered (within ``shutdown_grace_period``)."""
        async with self.serving(), self.session(transport) as session:
            self._broadcasts.add(session)
            try:
                await session.wait_closed()
            finally:
                self._broadcasts.forget(session)
