"""The client endpoint: a typed async method for every request a client sends, callbacks for
what a server sends."""

from __future__ import annotations

import sys
from collections.abc import AsyncIterator, Awaitable, Callable, Mapping, Sequence
from contextlib import AsyncExitStack, asynccontextmanager
from typing import TYPE_CHECKING, Any, Literal, TypeVar

from mcpbind.protocol.connection import SUPPORTED_VERSIONS, Connection
from mcpbind.protocol.errors import INVALID_PARAMS, McpError
from mcpbind.protocol.methods import NotificationSpec, RequestSpec, ToClient, ToServer
from mcpbind.runtime.session import (
    HandlerRegistry,
    NotificationHandler,
    ProgressCallback,
    RequestContext,
    Session,
)
from mcpbind.schema import v2025_11_25 as types
from mcpbind.server.pagination import all_pages
from mcpbind.transports.base import Transport

if TYPE_CHECKING:
    import httpx

if sys.version_info < (3, 11):  # pragma: no cover
    from exceptiongroup import BaseExceptionGroup

__all__ = ["Client", "ClientSession"]

methods = types.methods
P = TypeVar("P")
R = TypeVar("R")
UNSET = types.UNSET

# A client's handlers may take a bare ``RequestContext`` or a ``ClientContext`` (whose sends
# are checked as a client's).
SamplingHandler = Callable[
    [types.CreateMessageRequestParams, RequestContext[Any]], Awaitable[types.CreateMessageResult]
]
ElicitationHandler = Callable[[Any, RequestContext[Any]], Awaitable[types.ElicitResult]]
RootsHandler = Callable[[types.RequestParams, RequestContext[Any]], Awaitable[types.ListRootsResult]]
LoggingHandler = Callable[[types.LoggingMessageNotificationParams], Awaitable[None]]


def _opt(value: Any) -> Any:
    return UNSET if value is None else value


class ClientSession:
    """A connected, initialized client: one typed method per request a client sends.

    Every request waits for its answer at most ``timeout`` seconds when given, else the
    ``request_timeout`` of the :class:`Client`. An error answer, a timeout
    (``REQUEST_TIMEOUT``) and a closed connection (``CONNECTION_CLOSED``) raise
    :class:`~mcpbind.protocol.errors.McpError` with that code; cancelling the call sends
    ``notifications/cancelled`` to the server.
    """

    def __init__(self, session: Session, initialize_result: types.InitializeResult) -> None:
        self.session = session
        self.initialize_result = initialize_result

    @property
    def protocol_version(self) -> str:
        """The protocol version the server chose at initialize (one of the client's ``versions``)."""
        return self.initialize_result.protocol_version

    @property
    def server_info(self) -> types.Implementation:
        """The server's name, version and the like (its ``serverInfo``)."""
        return self.initialize_result.server_info

    @property
    def server_capabilities(self) -> types.ServerCapabilities:
        """What the server declared at initialize: the features it offers."""
        return self.initialize_result.capabilities

    @property
    def instructions(self) -> str | None:
        """The server's instructions for using it (meant for a model's prompt), if it gave any."""
        value = self.initialize_result.instructions
        return value if isinstance(value, str) else None

    async def request(
        self,
        spec: RequestSpec[P, R, ToServer],
        params: P,
        *,
        timeout: float | None = None,
        progress: ProgressCallback | None = None,
    ) -> R:
        """Any request a client sends, typed by its spec (``methods.TOOLS_CALL``...); a spec
        only a server sends (``methods.ROOTS_LIST``) is a type error."""
        return await self.session.request(spec, params, timeout=timeout, progress=progress)

    async def notify(self, spec: NotificationSpec[P, ToServer], params: P) -> None:
        """Send any notification a client sends, typed by its spec
        (``methods.NOTIFICATIONS_ROOTS_LIST_CHANGED``...)."""
        await self.session.notify(spec, params)

    async def ping(self, *, timeout: float | None = None) -> None:
        """``ping``: returns once the server answers."""
        await self.session.request(methods.PING, types.RequestParams(), timeout=timeout)

    async def list_tools(self, cursor: str | None = None) -> types.ListToolsResult:
        """``tools/list``: one page of tools, from ``cursor`` (the previous page's
        ``next_cursor``) or from the start; :meth:`all_tools` follows the pages."""
        return await self.request(methods.TOOLS_LIST, types.PaginatedRequestParams(cursor=_opt(cursor)))

    async def call_tool(
        self,
        name: str,
        arguments: Mapping[str, Any] | None = None,
        *,
        timeout: float | None = None,
        progress: ProgressCallback | None = None,
    ) -> types.CallToolResult:
        """``tools/call``: run the tool ``name`` with ``arguments`` (JSON values, by parameter
        name) and return its result: ``content`` (and ``structured_content`` for a tool with an
        output schema).

        A tool that fails for its caller does not raise: its result has ``is_error`` set and says
        why in its content (from MCP 2025-11-25 on, arguments the tool refuses are reported so
        too). An unknown tool, arguments refused by a server of an older version and any other
        protocol error raise :class:`~mcpbind.protocol.errors.McpError`
        (:class:`~mcpbind.protocol.errors.URLElicitationRequiredError` when the server needs the user to
        complete a URL elicitation first). ``progress``, if given, is called with each progress
        notification the server sends for this call (``progress, total, message``); ``timeout``
        as for every request. ``TypeError`` if the server answers with a task instead of a
        result (a task-augmented call; use :meth:`request` with ``methods.TOOLS_CALL`` for those).
        """
        params = types.CallToolRequestParams(
            name=name, arguments=UNSET if arguments is None else dict(arguments)
        )
        result = await self.request(methods.TOOLS_CALL, params, timeout=timeout, progress=progress)
        if not isinstance(result, types.CallToolResult):
            raise TypeError(f"expected a CallToolResult, got {type(result).__name__}")
        return result

    async def all_tools(self) -> list[types.Tool]:
        """Every tool, across all pages."""
        return [tool async for page in all_pages(self.list_tools) for tool in page.tools]

    async def all_resources(self) -> list[types.Resource]:
        """Every resource, across all pages."""
        return [item async for page in all_pages(self.list_resources) for item in page.resources]

    async def all_resource_templates(self) -> list[types.ResourceTemplate]:
        """Every resource template, across all pages."""
        return [
            item async for page in all_pages(self.list_resource_templates) for item in page.resource_templates
        ]

    async def all_prompts(self) -> list[types.Prompt]:
        """Every prompt, across all pages."""
        return [item async for page in all_pages(self.list_prompts) for item in page.prompts]

    async def list_resources(self, cursor: str | None = None) -> types.ListResourcesResult:
        """``resources/list``: one page of resources (``cursor`` as for :meth:`list_tools`)."""
        return await self.request(methods.RESOURCES_LIST, types.PaginatedRequestParams(cursor=_opt(cursor)))

    async def list_resource_templates(self, cursor: str | None = None) -> types.ListResourceTemplatesResult:
        """``resources/templates/list``: one page of resource templates (``cursor`` as for
        :meth:`list_tools`)."""
        return await self.request(
            methods.RESOURCES_TEMPLATES_LIST, types.PaginatedRequestParams(cursor=_opt(cursor))
        )

    async def read_resource(self, uri: str) -> types.ReadResourceResult:
        """``resources/read``: the contents at ``uri`` (text or blob items)."""
        return await self.request(methods.RESOURCES_READ, types.ReadResourceRequestParams(uri=uri))

    async def subscribe_resource(self, uri: str) -> None:
        """``resources/subscribe``: the server then sends ``notifications/resources/updated`` when
        the resource at ``uri`` changes (handle it with ``Client(notification_handlers=...)``)."""
        await self.request(methods.RESOURCES_SUBSCRIBE, types.SubscribeRequestParams(uri=uri))

    async def unsubscribe_resource(self, uri: str) -> None:
        """``resources/unsubscribe``: no more updates about ``uri``."""
        await self.request(methods.RESOURCES_UNSUBSCRIBE, types.UnsubscribeRequestParams(uri=uri))

    async def list_prompts(self, cursor: str | None = None) -> types.ListPromptsResult:
        """``prompts/list``: one page of prompts (``cursor`` as for :meth:`list_tools`)."""
        return await self.request(methods.PROMPTS_LIST, types.PaginatedRequestParams(cursor=_opt(cursor)))

    async def get_prompt(
        self, name: str, arguments: Mapping[str, str] | None = None
    ) -> types.GetPromptResult:
        """``prompts/get``: the prompt ``name`` filled in with ``arguments`` (strings, by name)."""
        params = types.GetPromptRequestParams(
            name=name, arguments=UNSET if arguments is None else dict(arguments)
        )
        return await self.request(methods.PROMPTS_GET, params)

    async def complete(
        self,
        ref: types.PromptReference | types.ResourceTemplateReference,
        argument: str,
        value: str,
        context: Mapping[str, str] | None = None,
    ) -> types.CompleteResult:
        """``completion/complete``: suggested values for the argument ``argument`` of a prompt or
        resource template (``ref``) whose value so far is ``value``; ``context``: the values of
        the arguments already chosen."""
        params = types.CompleteRequestParams(
            ref=ref,
            argument=types.CompleteRequestParamsArgument(name=argument, value=value),
            context=UNSET if context is None else types.CompleteRequestParamsContext(arguments=dict(context)),
        )
        return await self.request(methods.COMPLETION_COMPLETE, params)

    async def set_logging_level(self, level: types.LoggingLevel) -> None:
        """``logging/setLevel``: the server sends log messages of ``level`` and above only."""
        await self.request(methods.LOGGING_SET_LEVEL, types.SetLevelRequestParams(level=level))

    async def send_roots_list_changed(self) -> None:
        """``notifications/roots/list_changed``: tell the server that the roots have changed."""
        await self.notify(methods.NOTIFICATIONS_ROOTS_LIST_CHANGED, types.NotificationParams())


class Client(HandlerRegistry[ToClient, RequestContext[Any]]):
    """An MCP client: says who it is and what it handles, then connects to servers.

    ``name``, ``version`` and ``title`` are this client's own (its ``clientInfo``: ``version``
    is the client's version, not the protocol's). ``protocol_version`` is the protocol
    version to ask the server for at initialize (by default the first of ``versions``, the
    newest supported); ``versions`` are those accepted in the server's answer.

    ``sampling``, ``elicitation`` and ``roots`` handlers answer the server's requests and
    declare the matching capabilities; without one, the capability is not declared and the
    server may not send that request. ``logging`` receives the server's log messages;
    ``notification_handlers`` maps other notification methods to handlers.
    ``request_timeout``: the default limit in seconds for a request's answer (``None``: no
    limit); ``max_concurrent_requests``: how many requests from the server are handled at once.

    What the handlers support is declared too, and a request asking for more is answered
    with -32602 without reaching them, as the specification says:

    * ``elicitation_modes``: ``"form"`` (the default), ``"url"`` (MCP 2025-11-25) or both;
      declared as ``elicitation.form`` and ``elicitation.url``.
    * ``sampling_tools``: the sampling handler accepts ``tools`` and ``toolChoice``
      (``sampling.tools``).
    * ``sampling_context``: it honours an ``includeContext`` other than ``"none"``
      (``sampling.context``; the client may ignore the request, so such requests are not
      refused).
    """

    def __init__(
        self,
        name: str = "mcpbind",
        version: str = "0.1.0",
        *,
        title: str | None = None,
        sampling: SamplingHandler | None = None,
        elicitation: ElicitationHandler | None = None,
        elicitation_modes: Sequence[Literal["form", "url"]] | None = None,
        sampling_tools: bool = False,
        sampling_context: bool = False,
        roots: RootsHandler | None = None,
        logging: LoggingHandler | None = None,
        notification_handlers: Mapping[str, NotificationHandler] | None = None,
        versions: Sequence[str] = SUPPORTED_VERSIONS,
        protocol_version: str | None = None,
        request_timeout: float | None = 60.0,
        max_concurrent_requests: int = 16,
    ) -> None:
        self.info = types.Implementation(name=name, version=version, title=_opt(title))
        self.versions = tuple(versions)
        self.protocol_version = protocol_version or self.versions[0]
        self.request_timeout = request_timeout
        self.max_concurrent_requests = max_concurrent_requests
        super().__init__("client")
        self.notification_handlers.update(notification_handlers or {})
        if sampling is None and (sampling_tools or sampling_context):
            raise ValueError("sampling_tools and sampling_context need a sampling handler")
        if elicitation is None and elicitation_modes is not None:
            raise ValueError("elicitation_modes needs an elicitation handler")
        modes = frozenset(elicitation_modes if elicitation_modes is not None else ("form",))
        if not modes or not modes <= {"form", "url"}:
            raise ValueError(f"elicitation_modes: one or both of 'form' and 'url', not {sorted(modes)}")
        if sampling is not None:
            self.request_handlers[methods.SAMPLING_CREATE_MESSAGE.method] = (
                sampling if sampling_tools else _refusing_tools(sampling)
            )
        if elicitation is not None:
            self.request_handlers[methods.ELICITATION_CREATE.method] = (
                elicitation if len(modes) == 2 else _refusing_mode(elicitation, next(iter(modes)))
            )
        if roots is not None:
            self.request_handlers[methods.ROOTS_LIST.method] = roots
        if logging is not None:
            handler = logging

            async def on_log(params: Any, ctx: RequestContext) -> None:
                await handler(params)

            self.notification_handlers[methods.NOTIFICATIONS_MESSAGE.method] = on_log
        self.capabilities = types.ClientCapabilities(
            sampling=types.ClientCapabilitiesSampling(
                tools={} if sampling_tools else UNSET, context={} if sampling_context else UNSET
            )
            if sampling is not None
            else UNSET,
            elicitation=types.ClientCapabilitiesElicitation(
                form={} if "form" in modes else UNSET, url={} if "url" in modes else UNSET
            )
            if elicitation is not None
            else UNSET,
            roots=types.ClientCapabilitiesRoots(list_changed=True) if roots is not None else UNSET,
        )

    @asynccontextmanager
    async def connect(
        self, transport: Transport, *, timeout: float | None = None
    ) -> AsyncIterator[ClientSession]:
        """Initialize a session over ``transport``; it is closed when the block ends."""
        connection = Connection("client", self.info, self.capabilities, versions=self.versions)
        session = Session(
            transport,
            connection,
            request_handlers=self.request_handlers,
            notification_handlers=self.notification_handlers,
            request_timeout=self.request_timeout,
            max_concurrent_requests=self.max_concurrent_requests,
        )
        async with session:
            params = types.InitializeRequestParams(
                protocol_version=self.protocol_version, capabilities=self.capabilities, client_info=self.info
            )
            result = await session.request(methods.INITIALIZE, params, timeout=timeout)
            await session.send(connection.initialized(result))
            session.ready.set()
            yield ClientSession(session, result)

    @asynccontextmanager
    async def connect_stdio(
        self,
        command: str,
        args: Sequence[str] = (),
        *,
        env: Mapping[str, str] | None = None,
        cwd: str | None = None,
        timeout: float | None = None,
    ) -> AsyncIterator[ClientSession]:
        """Start ``command args...`` as a stdio server and connect to it."""
        from mcpbind.transports.stdio import spawn_stdio_server

        async with (
            spawn_stdio_server(
                command, list(args), env=dict(env) if env is not None else None, cwd=cwd
            ) as transport,
            self.connect(transport, timeout=timeout) as session,
        ):
            yield session

    @asynccontextmanager
    async def connect_url(
        self,
        url: str,
        *,
        transport: Literal["auto", "streamable-http", "sse"] = "auto",
        headers: Mapping[str, str] | None = None,
        auth: httpx.Auth | None = None,
        timeout: float | None = None,
        http_timeout: float = 30.0,
        sse_read_timeout: float = 300.0,
        max_requests_in_flight: int = 256,
    ) -> AsyncIterator[ClientSession]:
        """Connect to the MCP server at ``url`` over HTTP (needs the ``http`` extra).

        ``"auto"`` speaks Streamable HTTP and, as the spec's backward-compatibility section
        says, falls back to the legacy HTTP+SSE transport of 2024-11-05 when the initialize
        POST is answered with 400, 404 or 405 (``url`` is then the server's SSE endpoint).
        ``"streamable-http"`` and ``"sse"`` use only that transport. ``headers`` and ``auth``
        (an ``httpx.Auth``) go with every HTTP request; ``timeout`` bounds the handshake,
        ``http_timeout`` each HTTP exchange and ``sse_read_timeout`` a silent SSE stream.
        Over Streamable HTTP at most ``max_requests_in_flight`` requests are sent at once
        (each holds a connection until answered); more wait for a place, while pings,
        cancellations and other control messages go on apart from them.
        """
        from mcpbind.transports.http.client import HTTPTransportError, open_legacy_sse, open_streamable_http

        options: dict[str, Any] = {
            "headers": headers,
            "auth": auth,
            "timeout": http_timeout,
            "sse_read_timeout": sse_read_timeout,
        }
        async with AsyncExitStack() as stack:
            session: ClientSession | None = None
            if transport != "sse":
                probe = AsyncExitStack()
                try:
                    http = await probe.enter_async_context(
                        open_streamable_http(url, max_requests_in_flight=max_requests_in_flight, **options)
                    )
                    session = await probe.enter_async_context(self.connect(http, timeout=timeout))
                except BaseException as exc:
                    refused = _find(exc, HTTPTransportError)
                    await probe.aclose()  # its scopes were entered here: close them here, unshielded
                    if transport != "auto" or refused is None or refused.status not in (400, 404, 405):
                        if refused is not None:
                            raise refused from None
                        raise
                else:
                    stack.push_async_exit(probe)
            if session is None:
                legacy = await stack.enter_async_context(open_legacy_sse(url, **options))
                session = await stack.enter_async_context(self.connect(legacy, timeout=timeout))
            yield session


def _refusing_tools(handler: SamplingHandler) -> SamplingHandler:
    """``handler`` behind the check a client without ``sampling.tools`` must make."""

    async def sample(
        params: types.CreateMessageRequestParams, ctx: RequestContext
    ) -> types.CreateMessageResult:
        if params.tools is not UNSET or params.tool_choice is not UNSET:
            raise McpError(
                INVALID_PARAMS,
                "This client did not declare the 'sampling.tools' capability: no tools or toolChoice",
            )
        return await handler(params, ctx)

    return sample


def _refusing_mode(handler: ElicitationHandler, mode: str) -> ElicitationHandler:
    """``handler`` behind the check of a client that declared only ``mode`` elicitation."""

    async def elicit(params: Any, ctx: RequestContext) -> types.ElicitResult:
        asked = "url" if isinstance(params, types.ElicitRequestURLParams) else "form"
        if asked != mode:
            raise McpError(
                INVALID_PARAMS,
                f"This client did not declare elicitation in {asked} mode (only {mode} mode)",
            )
        return await handler(params, ctx)

    return elicit


E = TypeVar("E", bound=BaseException)


def _find(exc: BaseException, kind: type[E]) -> E | None:
    """``exc`` itself, or the one exception of ``kind`` inside (nested) exception groups."""
    if isinstance(exc, kind):
        return exc
    if isinstance(exc, BaseExceptionGroup):
        for inner in exc.exceptions:
            found = _find(inner, kind)
            if found is not None:
                return found
    return None
