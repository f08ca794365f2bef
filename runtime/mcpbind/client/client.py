"""The client endpoint: :class:`Client` says who it is and what it handles, then connects to
servers (over any transport, a command's stdio, or a URL) and yields each as a
:class:`~mcpbind.client.remote.RemoteServer`."""

from __future__ import annotations

import sys
from collections.abc import AsyncIterator, Iterable, Mapping, Sequence
from contextlib import AsyncExitStack, asynccontextmanager
from typing import TYPE_CHECKING, Any, Literal, TypeVar

from mcpbind import types
from mcpbind.client.callbacks import (
    ElicitationHandler,
    LoggingHandler,
    RootsHandler,
    SamplingHandler,
    refusing_mode,
    refusing_tools,
)
from mcpbind.client.remote import RemoteServer
from mcpbind.protocol.connection import Connection
from mcpbind.protocol.methods import ToClient
from mcpbind.runtime.context import RequestContext
from mcpbind.runtime.handlers import HandlerRegistry, NotificationHandler
from mcpbind.runtime.middleware import Middleware
from mcpbind.runtime.session import Session
from mcpbind.transports.base import Transport
from mcpbind.versions import HANDSHAKE_VERSIONS

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

    ``middleware`` sees each request and notification from the server before the handlers
    above, the first outermost (see :mod:`mcpbind.runtime.middleware`; :meth:`add_middleware`
    adds more); what the capability checks refuse passes it first.
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
        versions: Sequence[str] = HANDSHAKE_VERSIONS,
        protocol_version: str | None = None,
        request_timeout: float | None = 60.0,
        max_concurrent_requests: int = 16,
        middleware: Iterable[Middleware] = (),
    ) -> None:
        self.info = types.Implementation(name=name, version=version, title=UNSET if title is None else title)
        self.versions = tuple(versions)
        self.protocol_version = protocol_version or self.versions[0]
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
        self, transport: Transport, *, timeout: float | None = None
    ) -> AsyncIterator[RemoteServer]:
        """Connect to the server at the other end of ``transport``: initialize, then yield it
        as a :class:`~mcpbind.client.remote.RemoteServer`; the connection is closed when the
        block ends."""
        connection = Connection("client", self.info, self.capabilities, versions=self.versions)
        request_handlers, notification_handlers = self.session_handlers()
        session = Session(
            transport,
            connection,
            request_handlers=request_handlers,
            notification_handlers=notification_handlers,
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
            yield RemoteServer(session, result)

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
                server = await stack.enter_async_context(self.connect(legacy, timeout=timeout))
            yield server


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
