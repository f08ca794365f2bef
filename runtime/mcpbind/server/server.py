"""The server endpoint: typed handlers for what clients send, run over any transport."""

from __future__ import annotations

import functools
from collections.abc import AsyncIterator, Awaitable, Callable, Iterable, Mapping, Sequence
from contextlib import AbstractAsyncContextManager, asynccontextmanager
from typing import TYPE_CHECKING, Any, TypeVar

import anyio

from mcpbind import types
from mcpbind.protocol.connection import FULL_DELIVERY, Connection, Delivery
from mcpbind.protocol.errors import INVALID_PARAMS, METHOD_NOT_FOUND, RESOURCE_NOT_FOUND, McpError
from mcpbind.protocol.methods import RequestSpec, ToServer
from mcpbind.runtime.context import RequestContext
from mcpbind.runtime.handlers import HandlerRegistry
from mcpbind.runtime.lifespan import Lifespan
from mcpbind.runtime.middleware import Middleware
from mcpbind.runtime.session import Session, Spawn
from mcpbind.server.broadcast import Broadcasts
from mcpbind.server.handler_objects import handlers_of
from mcpbind.server.pagination import paginate
from mcpbind.transports.base import Transport
from mcpbind.versions import SUPPORTED_VERSIONS

if TYPE_CHECKING:
    from mcpbind.server.handler_objects import HandlerObject
    from mcpbind.server.prompts import FunctionPrompt
    from mcpbind.server.resources import FunctionResource, FunctionResourceTemplate
    from mcpbind.server.tools import FunctionTool
    from mcpbind.transports.http.server import StreamableHTTPApp

__all__ = ["Server"]

methods = types.methods
P = TypeVar("P")
R = TypeVar("R")
F = TypeVar("F", bound=Callable[..., Any])
CompletionFn = TypeVar(
    "CompletionFn",
    bound=Callable[
        [types.PromptReference | types.ResourceTemplateReference, str, str, dict[str, str]],
        Awaitable[Iterable[str]],
    ],
)

# Which server capability a handler for each method implies.
_CAPABILITY_OF_METHOD = {
    "tools/": "tools",
    "resources/": "resources",
    "prompts/": "prompts",
    "completion/": "completions",
}


class Server(HandlerRegistry[ToServer, RequestContext]):
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
    ``lifespan``: called with the server when it starts serving, an async context manager
    whose value handlers read as ``ctx.lifespan_state`` (see :mod:`mcpbind.runtime.lifespan`
    and :meth:`serving`).
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
    ) -> None:
        super().__init__("server", middleware)
        self._lifespan = Lifespan(lifespan, self) if lifespan is not None else None
        self.page_size = page_size
        self.max_uri_length = max_uri_length
        self.tools: dict[str, FunctionTool] = {}
        self._tool_definitions: list[types.Tool] | None = None
        self.resources: dict[str, FunctionResource] = {}
        self.resource_templates: list[FunctionResourceTemplate] = []
        self.prompts: dict[str, FunctionPrompt] = {}
        self._broadcasts = Broadcasts(self._check_uri)
        # The broadcasts' own set and dict (never replaced): the sessions served, each one's
        # subscribed URIs.
        self._sessions = self._broadcasts.sessions
        self._subscriptions = self._broadcasts.subscriptions
        self.request_handlers[methods.LOGGING_SET_LEVEL.method] = self._set_level
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
        """

        def register(fn: F) -> F:
            from mcpbind.server.tools import FunctionTool

            self._claim("tool", methods.TOOLS_LIST, methods.TOOLS_CALL)
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
            )
            self.tools[made.name] = made
            self._tool_definitions = None
            self._broadcasts.changed_soon(methods.NOTIFICATIONS_TOOLS_LIST_CHANGED)
            return fn

        return register

    async def _list_tools(
        self, params: types.PaginatedRequestParams, ctx: RequestContext
    ) -> types.ListToolsResult:
        if self._tool_definitions is None:  # built once per change of the tool set, not per call
            self._tool_definitions = [tool.definition() for tool in self.tools.values()]
        page = paginate(self._tool_definitions, params.cursor, self.page_size)
        return types.ListToolsResult(tools=page.items, next_cursor=page.next_cursor)

    async def _call_tool(
        self, params: types.CallToolRequestParams, ctx: RequestContext
    ) -> types.CallToolResult:
        tool = self.tools.get(params.name)
        if tool is None:
            raise McpError(INVALID_PARAMS, f"Unknown tool: {params.name}")
        return await tool.call(params.arguments if isinstance(params.arguments, dict) else {}, ctx)

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
    ) -> Callable[[F], F]:
        """Decorator: a resource at ``uri``, or resource template when ``uri`` holds ``{...}``
        (RFC 6570); see :mod:`mcpbind.server.resources`. ``title`` and ``icons`` as for :meth:`tool`.

        A template that cannot be matched unambiguously (see :mod:`mcpbind.server.uri_template`) is a
        ``ValueError`` naming it."""

        def register(fn: F) -> F:
            from mcpbind.server.resources import FunctionResource, FunctionResourceTemplate
            from mcpbind.server.uri_template import UriTemplate

            self._claim(
                "resource", methods.RESOURCES_LIST, methods.RESOURCES_TEMPLATES_LIST, methods.RESOURCES_READ
            )

            options: dict[str, Any] = {
                "name": name or fn.__name__,
                "title": title,
                "description": description,
                "mime_type": mime_type,
                "annotations": annotations,
                "meta": meta,
                "icons": list(icons) if icons is not None else None,
            }
            if "{" in uri:
                made = FunctionResourceTemplate(fn, template=UriTemplate(uri), **options)
                self.resource_templates = [
                    *(t for t in self.resource_templates if str(t.template) != uri),
                    made,
                ]
            else:
                self.resources[uri] = FunctionResource(fn, uri=uri, **options)
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
    ) -> Callable[[F], F]:
        """Decorator: a prompt whose arguments are the function's parameters; see
        :mod:`mcpbind.server.prompts`. ``title`` and ``icons`` as for :meth:`tool`."""

        def register(fn: F) -> F:
            from mcpbind.server.prompts import FunctionPrompt

            self._claim("prompt", methods.PROMPTS_LIST, methods.PROMPTS_GET)

            made = FunctionPrompt(
                fn,
                name or fn.__name__,
                title=title,
                description=description,
                meta=meta,
                icons=list(icons) if icons is not None else None,
            )
            self.prompts[made.name] = made
            self._broadcasts.changed_soon(methods.NOTIFICATIONS_PROMPTS_LIST_CHANGED)
            return fn

        return register

    async def _list_resources(
        self, params: types.PaginatedRequestParams, ctx: RequestContext
    ) -> types.ListResourcesResult:
        page = paginate([r.definition() for r in self.resources.values()], params.cursor, self.page_size)
        return types.ListResourcesResult(resources=page.items, next_cursor=page.next_cursor)

    async def _list_resource_templates(
        self, params: types.PaginatedRequestParams, ctx: RequestContext
    ) -> types.ListResourceTemplatesResult:
        page = paginate([t.definition() for t in self.resource_templates], params.cursor, self.page_size)
        return types.ListResourceTemplatesResult(resource_templates=page.items, next_cursor=page.next_cursor)

    def _check_uri(self, uri: str) -> None:
        if len(uri) > self.max_uri_length:
            raise McpError(
                INVALID_PARAMS,
                f"URI too long: {len(uri)} characters, more than the {self.max_uri_length} this server accepts",
            )

    async def _read_resource(
        self, params: types.ReadResourceRequestParams, ctx: RequestContext
    ) -> types.ReadResourceResult:
        uri = params.uri
        self._check_uri(uri)
        resource = self.resources.get(uri)
        if resource is not None:
            return types.ReadResourceResult(contents=await resource.read(ctx))
        for template in self.resource_templates:
            variables = template.match(uri)
            if variables is not None:
                return types.ReadResourceResult(contents=await template.read(uri, variables, ctx))
        raise McpError(RESOURCE_NOT_FOUND, f"Resource not found: {uri}", {"uri": uri})

    async def _list_prompts(
        self, params: types.PaginatedRequestParams, ctx: RequestContext
    ) -> types.ListPromptsResult:
        page = paginate([p.definition() for p in self.prompts.values()], params.cursor, self.page_size)
        return types.ListPromptsResult(prompts=page.items, next_cursor=page.next_cursor)

    async def _get_prompt(
        self, params: types.GetPromptRequestParams, ctx: RequestContext
    ) -> types.GetPromptResult:
        made = self.prompts.get(params.name)
        if made is None:
            raise McpError(INVALID_PARAMS, f"Unknown prompt: {params.name}")
        return await made.get(params.arguments if isinstance(params.arguments, dict) else {}, ctx)

    # -- completion, logging, list changes ---------------------------------------------------

    def completion(self) -> Callable[[CompletionFn], CompletionFn]:
        """Decorator: answer ``completion/complete`` for prompt arguments and template variables.

        The function gets the reference (prompt or resource template), the argument's name, the
        value typed so far and the arguments already resolved (``context.arguments``), and
        returns the candidate values; the first 100 are sent with ``total`` and ``hasMore``.
        """

        def register(fn: CompletionFn) -> CompletionFn:
            async def complete(
                params: types.CompleteRequestParams, ctx: RequestContext
            ) -> types.CompleteResult:
                resolved = params.context.arguments if not isinstance(params.context, types.UnsetType) else {}
                values = list(
                    await fn(
                        params.ref,
                        params.argument.name,
                        params.argument.value,
                        resolved if isinstance(resolved, dict) else {},
                    )
                )
                return types.CompleteResult(
                    completion=types.CompleteResultCompletion(
                        values=values[:100], total=len(values), has_more=len(values) > 100
                    )
                )

            self.request_handlers[methods.COMPLETION_COMPLETE.method] = complete
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
        del self.tools[name]
        self._tool_definitions = None
        self._broadcasts.changed_soon(methods.NOTIFICATIONS_TOOLS_LIST_CHANGED)

    def remove_prompt(self, name: str) -> None:
        """Remove a prompt; connected clients are told. ``KeyError`` if there is none."""
        del self.prompts[name]
        self._broadcasts.changed_soon(methods.NOTIFICATIONS_PROMPTS_LIST_CHANGED)

    def remove_resource(self, uri: str) -> None:
        """Remove the resource at ``uri``; connected clients are told. ``KeyError`` if there is none.

        Subscriptions to ``uri`` stay: a resource added again at the same URI is still watched.
        """
        del self.resources[uri]
        self._broadcasts.changed_soon(methods.NOTIFICATIONS_RESOURCES_LIST_CHANGED)

    def remove_resource_template(self, uri_template: str) -> None:
        """Remove the resource template registered as ``uri_template``; connected clients are
        told. ``KeyError`` if there is none."""
        kept = [t for t in self.resource_templates if str(t.template) != uri_template]
        if len(kept) == len(self.resource_templates):
            raise KeyError(uri_template)
        self.resource_templates = kept
        self._broadcasts.changed_soon(methods.NOTIFICATIONS_RESOURCES_LIST_CHANGED)

    # -- registration ---------------------------------------------------------------------

    def _own_handlers(self) -> dict[str, tuple[str, Callable[..., Any]]]:
        """The methods the decorators answer from their registries: method -> (decorator,
        handler). ``resources/subscribe`` and ``unsubscribe`` are not among them: a handler
        registered with :meth:`on` replaces the built-in one."""
        return {
            methods.TOOLS_LIST.method: ("tool", self._list_tools),
            methods.TOOLS_CALL.method: ("tool", self._call_tool),
            methods.RESOURCES_LIST.method: ("resource", self._list_resources),
            methods.RESOURCES_TEMPLATES_LIST.method: ("resource", self._list_resource_templates),
            methods.RESOURCES_READ.method: ("resource", self._read_resource),
            methods.PROMPTS_LIST.method: ("prompt", self._list_prompts),
            methods.PROMPTS_GET.method: ("prompt", self._get_prompt),
        }

    def _claim(self, decorator: str, *specs: RequestSpec[Any, Any, Any]) -> None:
        """Make the ``@server.<decorator>`` registry answer ``specs``; ``ValueError`` if another
        handler answers one of them already (it would be bypassed, or would bypass it)."""
        own = self._own_handlers()
        for spec in specs:
            current = self.request_handlers.get(spec.method)
            if current is not None and current != own[spec.method][1]:
                raise ValueError(
                    f"@server.{decorator}() cannot be used on a server that has its own handler for"
                    f" {spec.method} (registered with on() or add_handlers()): the {decorator}s"
                    f" registered would not be answered by it. Use one or the other."
                )
        for spec in specs:
            self.request_handlers[spec.method] = own[spec.method][1]

    def _check_free(self, method: str) -> None:
        """``ValueError`` if a decorator's registry answers ``method``."""
        owner = self._own_handlers().get(method)
        if owner is not None and self.request_handlers.get(method) == owner[1]:
            raise ValueError(
                f"{method} is answered by the {owner[0]}s registered with @server.{owner[0]}(), so"
                " a handler of its own cannot be registered for it (it would bypass them). Use one"
                " or the other."
            )

    def on(
        self, spec: RequestSpec[P, R, ToServer]
    ) -> Callable[[Callable[[P, RequestContext], Awaitable[R]]], Callable[[P, RequestContext], Awaitable[R]]]:
        """Decorator: handle the request ``spec`` (see :meth:`HandlerRegistry.on`); a method only
        a client receives (``methods.ROOTS_LIST``) is a type error, and ``ValueError`` at run time.

        ``ValueError`` for a method the tools, resources or prompts registered with the
        decorators answer (``tools/list``, ``tools/call``, ``resources/list``,
        ``resources/templates/list``, ``resources/read``, ``prompts/list``, ``prompts/get``):
        those are answered either by the decorators or by hand, not both.
        """
        decorate = super().on(spec)

        def register(
            handler: Callable[[P, RequestContext], Awaitable[R]],
        ) -> Callable[[P, RequestContext], Awaitable[R]]:
            self._check_free(spec.method)
            return decorate(handler)

        return register

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
            self._check_free(method)
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
        present = {
            cap
            for method in self.request_handlers
            for prefix, cap in _CAPABILITY_OF_METHOD.items()
            if method.startswith(prefix)
        }
        return types.ServerCapabilities(
            tools=types.ServerCapabilitiesTools(
                list_changed=True if self._lists(methods.TOOLS_LIST, self._list_tools) else types.UNSET
            )
            if "tools" in present
            else types.UNSET,
            resources=types.ServerCapabilitiesResources(
                subscribe=True if "resources/subscribe" in self.request_handlers else types.UNSET,
                list_changed=True
                if self._lists(methods.RESOURCES_LIST, self._list_resources)
                else types.UNSET,
            )
            if "resources" in present
            else types.UNSET,
            prompts=types.ServerCapabilitiesPrompts(
                list_changed=True if self._lists(methods.PROMPTS_LIST, self._list_prompts) else types.UNSET
            )
            if "prompts" in present
            else types.UNSET,
            logging={} if logs else types.UNSET,
            completions={} if "completions" in present else types.UNSET,
        )

    def _lists(self, spec: RequestSpec[Any, Any, Any], own: Callable[..., Any]) -> bool:
        """Whether ``spec`` is answered from the decorators' registry, which tells of changes."""
        return bool(self.request_handlers.get(spec.method) == own)

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

    async def end_session(self, session: Session) -> None:
        """End a session made by :meth:`inline_session`: its handlers are cancelled, its
        transport closed, and the server forgets it."""
        self._broadcasts.forget(session)
        await session.end()

    @asynccontextmanager
    async def serving(self) -> AsyncIterator[None]:
        """The server serves during the block: its lifespan (``Server(lifespan=...)``) is
        entered, or joined if it is already (see :mod:`mcpbind.runtime.lifespan`). :meth:`run`
        and the ASGI lifespan of :meth:`http_app` do this themselves; use it around several
        :meth:`run` calls that share one lifespan."""
        if self._lifespan is None:
            yield
            return
        async with self._lifespan.serving():
            yield

    async def run(self, transport: Transport) -> None:
        """Serve one client over ``transport`` until it closes the connection and the requests it
        sent before are answered (within ``shutdown_grace_period``)."""
        async with self.serving(), self.session(transport) as session:
            self._broadcasts.add(session)
            try:
                await session.wait_closed()
            finally:
                self._broadcasts.forget(session)

    async def run_stdio(self, *, max_message_size: int | None = None) -> None:
        """Serve one client over this process's stdin and stdout, until stdin closes."""
        from mcpbind.transports.stdio import stdio_server_transport

        kwargs = {} if max_message_size is None else {"max_message_size": max_message_size}
        async with stdio_server_transport(**kwargs) as transport:
            await self.run(transport)

    def run_stdio_sync(self, backend: str = "asyncio") -> None:
        """Blocking :meth:`run_stdio`, for a script's ``main``."""
        anyio.run(self.run_stdio, backend=backend)

    def http_app(self, **options: Any) -> StreamableHTTPApp[Server]:
        """This server's Streamable HTTP transport as an ASGI application, to mount in any ASGI
        server (``options``: see :class:`~mcpbind.transports.http.server.StreamableHTTPApp`)."""
        # A downward import (the HTTP app needs only a ServerEndpoint, never this module), made
        # here so that a server that never serves HTTP does not load it.
        from mcpbind.transports.http.server import StreamableHTTPApp

        return StreamableHTTPApp(self, **options)

    async def run_http(self, host: str = "127.0.0.1", port: int = 8000, **options: Any) -> None:
        """Serve over Streamable HTTP at ``http://host:port/mcp`` (uvicorn on asyncio, hypercorn
        on trio) until cancelled; needs the ``http`` extra."""
        from mcpbind.transports.http.server import serve_http  # (as in http_app)

        await serve_http(self, host, port, **options)

    def run_http_sync(
        self, host: str = "127.0.0.1", port: int = 8000, backend: str = "asyncio", **options: Any
    ) -> None:
        """Blocking :meth:`run_http`, for a script's ``main``."""
        anyio.run(functools.partial(self.run_http, host, port, **options), backend=backend)
