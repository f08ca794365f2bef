"""The server endpoint: typed handlers for what clients send, run over any transport."""

from __future__ import annotations

import inspect
from collections.abc import Awaitable, Callable
from typing import TYPE_CHECKING, Any, TypeVar

import anyio

from mcpbind.connection import SUPPORTED_VERSIONS, Connection
from mcpbind.errors import INVALID_PARAMS, McpError
from mcpbind.schema import v2025_11_25 as types
from mcpbind.session import HandlerRegistry, NotificationHandler, RequestContext, RequestHandler, Session
from mcpbind.transport import Transport

if TYPE_CHECKING:
    from mcpbind.tools import FunctionTool

__all__ = ["Server"]

methods = types.methods
P = TypeVar("P")
R = TypeVar("R")
F = TypeVar("F", bound=Callable[..., Any])

# Which server capability a handler for each method implies.
_CAPABILITY_OF_METHOD = {
    "tools/": "tools",
    "resources/": "resources",
    "prompts/": "prompts",
    "logging/": "logging",
    "completion/": "completions",
}


class Server(HandlerRegistry):
    """An MCP server: register handlers, then :meth:`run` it over a transport.

    Handlers take the method's params struct and a :class:`RequestContext` and return its
    result struct; both types come from the method table, so mypy checks them::

        server = Server("demo", "1.0")

        @server.on(methods.TOOLS_CALL)
        async def call_tool(params: types.CallToolRequestParams, ctx: RequestContext) -> types.CallToolResult:
            ...

    An object whose methods follow the generated protocols (``ServerHandlers`` and its parts
    such as ``HandlesToolsCall``) can be registered whole with :meth:`add_handlers`.
    Capabilities are derived from the registered handlers unless given.
    """

    def __init__(
        self,
        name: str,
        version: str,
        *,
        title: str | None = None,
        instructions: str | None = None,
        capabilities: types.ServerCapabilities | None = None,
        versions: tuple[str, ...] = SUPPORTED_VERSIONS,
        request_timeout: float | None = 60.0,
        max_concurrent_requests: int = 64,
        max_pending_requests: int = 1024,
        expose_internal_errors: bool = False,
        page_size: int = 100,
    ) -> None:
        super().__init__("server")
        self.page_size = page_size
        self.tools: dict[str, FunctionTool] = {}
        self.info = types.Implementation(
            name=name, version=version, title=title if title is not None else types.UNSET
        )
        self.instructions = instructions
        self.capabilities = capabilities
        self.versions = versions
        self.request_timeout = request_timeout
        self.max_concurrent_requests = max_concurrent_requests
        self.max_pending_requests = max_pending_requests
        self.expose_internal_errors = expose_internal_errors

    # -- tools from functions ---------------------------------------------------------------

    def tool(
        self,
        name: str | None = None,
        *,
        title: str | None = None,
        description: str | None = None,
        annotations: types.ToolAnnotations | None = None,
        meta: dict[str, Any] | None = None,
    ) -> Callable[[F], F]:
        """Decorator: make a function (sync or async) a tool; see :mod:`mcpbind.tools`.

        The function is returned unchanged, so it stays callable with its own signature.
        """

        def register(fn: F) -> F:
            from mcpbind.tools import FunctionTool

            made = FunctionTool(
                fn,
                name or fn.__name__,
                title=title,
                description=description,
                annotations=annotations,
                meta=meta,
            )
            self.tools[made.name] = made
            self.request_handlers.setdefault(methods.TOOLS_LIST.method, self._list_tools)
            self.request_handlers.setdefault(methods.TOOLS_CALL.method, self._call_tool)
            return fn

        return register

    async def _list_tools(
        self, params: types.PaginatedRequestParams, ctx: RequestContext
    ) -> types.ListToolsResult:
        from mcpbind.pagination import paginate

        page = paginate([tool.definition() for tool in self.tools.values()], params.cursor, self.page_size)
        return types.ListToolsResult(tools=page.items, next_cursor=page.next_cursor)

    async def _call_tool(
        self, params: types.CallToolRequestParams, ctx: RequestContext
    ) -> types.CallToolResult:
        tool = self.tools.get(params.name)
        if tool is None:
            raise McpError(INVALID_PARAMS, f"Unknown tool: {params.name}")
        return await tool.call(params.arguments if isinstance(params.arguments, dict) else {}, ctx)

    # -- registration ---------------------------------------------------------------------

    def add_handlers(self, handlers: object) -> None:
        """Register every ``on_<method>`` of ``handlers`` (see ``mcpbind.schema.v2025_11_25.stubs``)."""
        from mcpbind.schema.v2025_11_25.stubs import ServerHandlers

        found = 0
        for protocol in ServerHandlers.__mro__[1:]:
            for name, member in vars(protocol).items():
                if not name.startswith("on_") or not inspect.iscoroutinefunction(member):
                    continue
                bound = getattr(handlers, name, None)
                if bound is None:
                    continue
                method = _method_of_handler(name)
                if method in methods.REQUESTS:
                    self.request_handlers[method] = _positional(bound)
                else:
                    self.notification_handlers[method] = _positional_notification(bound)
                found += 1
        if not found:
            raise ValueError(f"{type(handlers).__name__} has no on_<method> handlers")

    def server_capabilities(self) -> types.ServerCapabilities:
        """The capabilities declared at initialize: the given ones, else those the handlers imply."""
        if self.capabilities is not None:
            return self.capabilities
        present = {
            cap
            for method in self.request_handlers
            for prefix, cap in _CAPABILITY_OF_METHOD.items()
            if method.startswith(prefix)
        }
        return types.ServerCapabilities(
            tools=types.ServerCapabilitiesTools() if "tools" in present else types.UNSET,
            resources=types.ServerCapabilitiesResources(
                subscribe=True if "resources/subscribe" in self.request_handlers else types.UNSET
            )
            if "resources" in present
            else types.UNSET,
            prompts=types.ServerCapabilitiesPrompts() if "prompts" in present else types.UNSET,
            logging={} if "logging" in present else types.UNSET,
            completions={} if "completions" in present else types.UNSET,
        )

    # -- running --------------------------------------------------------------------------

    def connection(self) -> Connection:
        return Connection(
            "server",
            self.info,
            self.server_capabilities(),
            instructions=self.instructions,
            versions=self.versions,
        )

    def session(self, transport: Transport) -> Session:
        """A session over ``transport`` (use as ``async with``); :meth:`run` is the usual way."""
        return Session(
            transport,
            self.connection(),
            request_handlers=self.request_handlers,
            notification_handlers=self.notification_handlers,
            request_timeout=self.request_timeout,
            max_concurrent_requests=self.max_concurrent_requests,
            max_pending_requests=self.max_pending_requests,
            expose_internal_errors=self.expose_internal_errors,
        )

    async def run(self, transport: Transport) -> None:
        """Serve one client over ``transport`` until it closes the connection."""
        async with self.session(transport) as session:
            await session.wait_closed()

    async def run_stdio(self, *, max_message_size: int | None = None) -> None:
        """Serve one client over this process's stdin and stdout, until stdin closes."""
        from mcpbind.stdio import stdio_server_transport

        kwargs = {} if max_message_size is None else {"max_message_size": max_message_size}
        async with stdio_server_transport(**kwargs) as transport:
            await self.run(transport)

    def run_stdio_sync(self, backend: str = "asyncio") -> None:
        """Blocking :meth:`run_stdio`, for a script's ``main``."""
        anyio.run(self.run_stdio, backend=backend)


def _method_of_handler(name: str) -> str:
    for method in [*methods.REQUESTS, *methods.NOTIFICATIONS]:
        if "on_" + method.removeprefix("notifications/").replace("/", "_").lower() == name:
            return method
    raise ValueError(f"no method for handler {name}")


def _positional(bound: Callable[..., Awaitable[Any]]) -> RequestHandler:
    async def call(params: Any, ctx: RequestContext) -> Any:
        return await bound(params, ctx)

    return call


def _positional_notification(bound: Callable[..., Awaitable[Any]]) -> NotificationHandler:
    async def call(params: Any, ctx: RequestContext) -> None:
        await bound(params, ctx)

    return call
