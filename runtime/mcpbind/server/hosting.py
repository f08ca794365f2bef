"""Serving a server on the standard transports from a script: stdin and stdout, or Streamable
HTTP under uvicorn or hypercorn (:class:`Hosting`, which :class:`~mcpbind.server.server.Server`
mixes in)."""

from __future__ import annotations

import functools
from typing import TYPE_CHECKING, Any, TypeVar, overload

from mcpbind import event_loop
from mcpbind.transports.base import Transport

# (for annotations only: a server that never serves HTTP does not load the HTTP package)
if TYPE_CHECKING:
    from mcpbind.server.auth.middleware import ProtectedApp
    from mcpbind.server.auth.settings import ResourceServerAuth
    from mcpbind.transports.http.endpoint import ServerEndpoint
    from mcpbind.transports.http.server import StreamableHTTPApp

__all__ = ["Hosting"]

EndpointT = TypeVar("EndpointT", bound="ServerEndpoint")


class Hosting:
    """The ``run_*`` and ``http_app`` conveniences of an endpoint that serves one client over a
    transport with :meth:`run`."""

    async def run(self, transport: Transport) -> None:
        """Serve one client over ``transport`` (the endpoint's own; :class:`Server` has it)."""
        raise NotImplementedError

    async def run_stdio(self, *, max_message_size: int | None = None) -> None:
        """Serve one client over this process's stdin and stdout, until stdin closes."""
        from mcpbind.transports.stdio import stdio_server_transport

        kwargs = {} if max_message_size is None else {"max_message_size": max_message_size}
        async with stdio_server_transport(**kwargs) as transport:
            await self.run(transport)

    def run_stdio_sync(self, backend: str = "asyncio", loop: str = "auto") -> None:
        """Blocking :meth:`run_stdio`, for a script's ``main``; on asyncio, ``loop`` is asyncio's
        own (``"auto"`` or ``"asyncio"``) or uvloop (``"uvloop"``; see :mod:`mcpbind.event_loop`)."""
        event_loop.run(self.run_stdio, backend=backend, loop=loop, prefer_uvloop=False)

    @overload
    def http_app(self: EndpointT, *, auth: None = None, **options: Any) -> StreamableHTTPApp[EndpointT]: ...

    @overload
    def http_app(self: EndpointT, *, auth: ResourceServerAuth, **options: Any) -> ProtectedApp: ...

    def http_app(
        self: EndpointT, *, auth: ResourceServerAuth | None = None, **options: Any
    ) -> StreamableHTTPApp[EndpointT] | ProtectedApp:
        """This server's Streamable HTTP transport as an ASGI application, to mount in any ASGI
        server (``options``: see :class:`~mcpbind.transports.http.server.StreamableHTTPApp`).
        With ``auth``, behind the OAuth resource server middleware (see
        :mod:`mcpbind.server.auth`). With ``store=`` (a :class:`~mcpbind.store.RedisStore`,
        say), one of several workers sharing it (see :meth:`serving`)."""
        # A downward import (the HTTP app needs only a ServerEndpoint, never this module), made
        # here so that a server that never serves HTTP does not load it.
        from mcpbind.transports.http.server import StreamableHTTPApp

        app = StreamableHTTPApp(self, **options)
        if auth is None:
            return app
        from mcpbind.server.auth.middleware import ProtectedApp

        return ProtectedApp(app, auth)

    async def run_http(
        self: ServerEndpoint,
        host: str = "127.0.0.1",
        port: int = 8000,
        *,
        auth: ResourceServerAuth | None = None,
        **options: Any,
    ) -> None:
        """Serve over Streamable HTTP at ``http://host:port/mcp`` (uvicorn on asyncio, hypercorn
        on trio) until cancelled, protected as ``auth`` says if given, sharing ``store=`` with
        other workers if given (as for :meth:`http_app`); needs the ``http`` extra."""
        from mcpbind.transports.http.server import serve_http  # (as in http_app)

        if auth is not None:
            from mcpbind.server.auth.middleware import ProtectedApp

            options["wrap"] = functools.partial(ProtectedApp, auth=auth)
        await serve_http(self, host, port, **options)

    def run_http_sync(
        self: ServerEndpoint,
        host: str = "127.0.0.1",
        port: int = 8000,
        backend: str = "asyncio",
        loop: str = "auto",
        **options: Any,
    ) -> None:
        """Blocking :meth:`run_http`, for a script's ``main``; on asyncio, ``loop`` is uvloop
        when installed (``"auto"``), asyncio's own (``"asyncio"``) or uvloop (``"uvloop"``; see
        :mod:`mcpbind.event_loop`)."""
        event_loop.run(
            functools.partial(Hosting.run_http, self, host, port, **options), backend=backend, loop=loop
        )
