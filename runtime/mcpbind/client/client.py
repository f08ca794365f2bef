"""The client endpoint: :class:`Client` says who it is and what it handles, then connects to
servers (over any transport, a command's stdio, or a URL) and yields each as a
:class:`~mcpbind.client.remote.RemoteServer`."""

from __future__ import annotations

import sys
from collections.abc import AsyncIterator, Iterable, Mapping, Sequence
from contextlib import AsyncExitStack, asynccontextmanager
from typing import TYPE_CHECKING, Any, Literal, TypeVar

import msgspec

from mcpbind import types
from mcpbind.client.caching import ResultCache
from mcpbind.client.callbacks import (
    ElicitationHandler,
    LoggingHandler,
    RootsHandler,
    SamplingHandler,
    refusing_mode,
    refusing_tools,
)
from mcpbind.client.remote import RemoteServer
from mcpbind.client.stateless import Stateless
from mcpbind.client.subscriptions import Subscriptions
from mcpbind.protocol.connection import Connection
from mcpbind.protocol.envelope import envelope_meta
from mcpbind.protocol.errors import UNSUPPORTED_PROTOCOL_VERSION, McpError
from mcpbind.protocol.methods import ToClient
from mcpbind.runtime.context import RequestContext
from mcpbind.runtime.handlers import HandlerRegistry, NotificationHandler
from mcpbind.runtime.middleware import Middleware
from mcpbind.runtime.session import Session
from mcpbind.transports.base import Transport
from mcpbind.versions import KNOWN_VERSIONS, MODERN_VERSIONS, SUPPORTED_VERSIONS, schema_for

if TYPE_CHECKING:
    import httpx

if sys.version_info < (3, 11):  # pragma: no cover
    from exceptiongroup import BaseExceptionGroup

__all__ = ["Client"]

methods = types.methods
UNSET = types.UNSET


class Client(HandlerRegistry[ToClient, RequestContext[Any]]):
    """An MCP client: says who it is and what it handles, then connects to servers.

    ``name``, ``version`` and ``title`` are this client's own (its ``clientInfo``: ``version``
    is the client's version, not the protocol's).

    Versions: ``versions`` are the protocol versions this client speaks (by default all
    that mcpbind does, stateless MCP 2026-07-28 first). Without ``protocol_version`` the
    client negotiates the era: it sends ``server/discover`` at its newest stateless version
    and speaks that (no session; every request carries the client's ``_meta`` envelope) when
    the server answers with one, else falls back to the ``initialize`` handshake at its newest
    handshake version, as the official SDKs do (any error but an
    ``UnsupportedProtocolVersionError`` naming only stateless versions it lacks falls back; one
    naming a version both speak is probed again at it; transport failures are raised).
    ``protocol_version`` pins a version: a stateless one is spoken at once, without
    ``server/discover`` unless ``discover=True`` (the server's capabilities are then unknown:
    empty); a handshake one is asked for at ``initialize`` (the server's answer must be one of
    ``versions``).

    Stateless versions only: ``log_level`` is the lowest level of log messages each request
    asks the server for (``None``, the default: none are sent; per call,
    ``server.call_tool(..., log_level=)``); ``max_input_rounds`` bounds the multi round-trip
    exchanges of one request (the server asking for sampling, elicitation or roots, answered
    with the handlers below); ``cache=True`` keeps list and read results for as long as
    their ``ttlMs`` says (see :mod:`mcpbind.client.caching`).

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

    ``middleware`` sees each request and notification from the server before the handlers
    above, the first outermost (see :mod:`mcpbind.runtime.middleware`; :meth:`add_middleware`
    adds more); what the capability checks refuse passes it first.

    ``raw_params``: the requests from the server whose handlers get their params as received
    (``msgspec.Raw``, undecoded: a proxy forwards them).
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
        discover: bool | None = None,
        log_level: types.LoggingLevel | None = None,
        max_input_rounds: int = 8,
        cache: bool = False,
        request_timeout: float | None = 60.0,
        max_concurrent_requests: int = 16,
        middleware: Iterable[Middleware] = (),
        raw_params: Iterable[str] = (),
    ) -> None:
        self.raw_params = frozenset(raw_params)
        self.info = types.Implementation(name=name, version=version, title=UNSET if title is None else title)
        self.versions = tuple(versions)
        if not self.versions:
            raise ValueError("versions: at least one protocol version")
        if protocol_version is not None and protocol_version not in self.versions:
            raise ValueError(f"protocol_version {protocol_version!r} is not one of versions {self.versions}")
        if max_input_rounds < 1:
            raise ValueError("max_input_rounds must be at least 1")
        self.protocol_version = protocol_version
        self.discover = discover
        self.log_level: types.LoggingLevel | None = log_level
        self.max_input_rounds = max_input_rounds
        self.cache = cache
        self.request_timeout = request_timeout
        self.max_concurrent_requests = max_concurrent_requests
        super().__init__("client", middleware)
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
                sampling if sampling_tools else refusing_tools(sampling)
            )
        if elicitation is not None:
            self.request_handlers[methods.ELICITATION_CREATE.method] = (
                elicitation if len(modes) == 2 else refusing_mode(elicitation, next(iter(modes)))
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
        self, transport: Transport, *, timeout: float | None = None, negotiate: bool = True
    ) -> AsyncIterator[RemoteServer]:
        """Connect to the server at the other end of ``transport``: negotiate the version (see
        the class), then yield the server as a :class:`~mcpbind.client.remote.RemoteServer`;
        the connection is closed when the block ends. ``negotiate=False`` skips
        ``server/discover`` and goes straight to ``initialize`` (unless a stateless version is
        pinned), as a transport of the handshake versions only does by itself (the legacy
        HTTP+SSE transport, whose ``handshake_only`` is true)."""
        negotiate = negotiate and not getattr(transport, "handshake_only", False)
        connection = Connection(
            "client", self.info, self.capabilities, versions=self.versions, raw_params=self.raw_params
        )
        request_handlers, notification_handlers = self.session_handlers()
        cache = ResultCache() if self.cache else None
        subscriptions = Subscriptions(notification_handlers, cache.changed if cache is not None else None)
        session = Session(
            transport,
            connection,
            request_handlers=request_handlers,
            notification_handlers=subscriptions.handlers(),
            request_timeout=self.request_timeout,
            max_concurrent_requests=self.max_concurrent_requests,
        )
        async with session:
            server = await self._open(session, connection, timeout, negotiate, subscriptions, cache)
            session.ready.set()
            yield server

    async def _open(
        self,
        session: Session,
        connection: Connection,
        timeout: float | None,
        negotiate: bool,
        subscriptions: Subscriptions,
        cache: ResultCache | None,
    ) -> RemoteServer:
        pin = self.protocol_version
        modern = [v for v in self.versions if v in MODERN_VERSIONS]
        handshake = [v for v in self.versions if v not in MODERN_VERSIONS]

        async def initialize(version: str) -> RemoteServer:
            params = types.InitializeRequestParams(
                protocol_version=version, capabilities=self.capabilities, client_info=self.info
            )
            result = await session.request(methods.INITIALIZE, params, timeout=timeout)
            await session.send(connection.initialized(result))
            return RemoteServer(session, result, subscriptions=subscriptions)

        def adopt(version: str, discovered: Any) -> RemoteServer:
            stateless = Stateless(
                version, self.capabilities, self.info, self.log_level, self.max_input_rounds
            )
            if discovered is None:
                result = types.InitializeResult(
                    protocol_version=version,
                    capabilities=types.ServerCapabilities(),
                    server_info=types.Implementation(name="", version=""),
                )
            else:
                capabilities = msgspec.json.decode(
                    msgspec.json.encode(discovered.capabilities), type=types.ServerCapabilities
                )
                stateless.note_result(discovered)  # its identity is in the result's _meta
                result = types.InitializeResult(
                    protocol_version=version,
                    capabilities=capabilities,
                    server_info=stateless.server_info or types.Implementation(name="", version=""),
                    instructions=discovered.instructions,
                )
            instructions = result.instructions if isinstance(result.instructions, str) else None
            connection.adopt(version, stateless.server_info, result.capabilities, instructions)
            return RemoteServer(
                session,
                result,
                stateless=stateless,
                discover_result=discovered,
                subscriptions=subscriptions,
                cache=cache,
            )

        if pin is not None and pin in MODERN_VERSIONS:
            return adopt(pin, await self._discover(session, pin, timeout) if self.discover else None)
        if pin is not None:
            return await initialize(pin)
        if not modern or not negotiate or self.discover is False:
            if not handshake:
                raise McpError(
                    UNSUPPORTED_PROTOCOL_VERSION,
                    "This client speaks only stateless versions and may not probe the server with "
                    "server/discover: pin one with protocol_version=",
                )
            return await initialize(handshake[0])
        # The era negotiation: server/discover, else initialize.
        version = modern[0]
        for attempt in range(2):
            try:
                discovered = await self._discover(session, version, timeout)
            except McpError as exc:
                if exc.code == UNSUPPORTED_PROTOCOL_VERSION:
                    supported = _supported(exc)
                    mutual = [v for v in modern if v in (supported or ())]
                    if mutual and attempt == 0 and mutual[0] != version:
                        version = mutual[0]
                        continue
                    if supported is not None and not any(v in _HANDSHAKE_KNOWN for v in supported):
                        raise  # a stateless-only server with no version in common
                if not handshake:
                    raise
                try:
                    return await initialize(handshake[0])
                except McpError as refused:
                    # -32022 to initialize: the server locked itself stateless meanwhile (a
                    # probe that timed out here but reached it); probe once more at its version.
                    mutual = [v for v in modern if v in (_supported(refused) or ())]
                    if refused.code != UNSUPPORTED_PROTOCOL_VERSION or attempt != 0 or not mutual:
                        raise
                    version = mutual[0]
                    continue
            offered = [v for v in modern if v in discovered.supported_versions]
            if not offered:
                # It answers discover but advertises only handshake versions: a legacy server.
                if not handshake:
                    raise McpError(
                        UNSUPPORTED_PROTOCOL_VERSION,
                        f"The server speaks none of this client's versions ({', '.join(self.versions)}); "
                        f"it offers {', '.join(discovered.supported_versions)}",
                    )
                return await initialize(handshake[0])
            return adopt(version if version in offered else offered[0], discovered)
        raise AssertionError("unreachable")

    async def _discover(self, session: Session, version: str, timeout: float | None) -> Any:
        modern = schema_for(version)
        params = modern.structs.RequestParams(meta=envelope_meta(version, self.capabilities, self.info))
        return await session.request(modern.methods.SERVER_DISCOVER, params, timeout=timeout)

    @asynccontextmanager
    async def connect_stdio(
        self,
        command: str,
        args: Sequence[str] = (),
        *,
        env: Mapping[str, str] | None = None,
        cwd: str | None = None,
        timeout: float | None = None,
    ) -> AsyncIterator[RemoteServer]:
        """Start ``command args...`` as a stdio server and connect to it."""
        from mcpbind.transports.stdio import spawn_stdio_server

        async with (
            spawn_stdio_server(
                command, list(args), env=dict(env) if env is not None else None, cwd=cwd
            ) as transport,
            self.connect(transport, timeout=timeout) as server,
        ):
            yield server

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
    ) -> AsyncIterator[RemoteServer]:
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
            server: RemoteServer | None = None
            if transport != "sse":
                probe = AsyncExitStack()
                try:
                    http = await probe.enter_async_context(
                        open_streamable_http(url, max_requests_in_flight=max_requests_in_flight, **options)
                    )
                    server = await probe.enter_async_context(self.connect(http, timeout=timeout))
                except BaseException as exc:
                    refused = _find(exc, HTTPTransportError)
                    await probe.aclose()  # its scopes were entered here: close them here, unshielded
                    if transport != "auto" or refused is None or refused.status not in (400, 404, 405):
                        if refused is not None:
                            raise refused from None
                        raise
                else:
                    stack.push_async_exit(probe)
            if server is None:
                legacy = await stack.enter_async_context(open_legacy_sse(url, **options))
                # The legacy transport is 2024-11-05's: straight to initialize.
                server = await stack.enter_async_context(self.connect(legacy, timeout=timeout))
            yield server


E = TypeVar("E", bound=BaseException)


# Every handshake version there is (an unknown version is a newer, stateless one).
_HANDSHAKE_KNOWN = frozenset(v for v in KNOWN_VERSIONS if v not in MODERN_VERSIONS)


def _supported(error: McpError) -> list[str] | None:
    """The versions an ``UnsupportedProtocolVersionError`` names, if it names them."""
    data = error.data
    supported = data.get("supported") if isinstance(data, dict) else None
    if isinstance(supported, list) and all(isinstance(v, str) for v in supported):
        return supported
    return None


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
