"""DNS-rebinding protection and CORS as ASGI middleware, for any ASGI application.

::

    app = SecurityMiddleware(inner)                                   # loopback names only
    app = SecurityMiddleware(inner, allowed_hosts=["mcp.example.com"], allowed_origins=None)
    app = SecurityMiddleware(inner, cors_origins=["https://app.example"])

A web page can make a browser send requests to a server on the user's machine, by a name of its
own that resolves to 127.0.0.1 (DNS rebinding) or straight from its origin; the MCP
specification asks HTTP servers to validate ``Origin`` against it. This middleware checks each
``http`` request before the application sees it, and answers the refused ones itself with
``403`` and a JSON-RPC error (``-32600``, id ``null``) as body. Other connections (``lifespan``,
``websocket``) pass through unchecked. Both of mcpbind's HTTP apps wrap themselves in it:
their ``allowed_hosts``, ``allowed_origins`` and ``cors_origins`` options are the ones below.

Options:

* ``allowed_hosts``: patterns the ``Host`` header must match; a request without one is refused
  too. ``None``: no check (behind a reverse proxy that checks, say). By default the loopback
  names (``127.0.0.1``, ``localhost``, ``[::1]``), with or without a port.
* ``allowed_origins``: patterns an ``Origin`` header, when there is one, must match (a request
  without ``Origin`` does not come from a web page). ``None``: no check. By default the loopback
  names over ``http`` and ``https``, with or without a port.
* A pattern is compared in full, ignoring case. One ending in ``:*`` stands for the name
  followed by any port (ASCII digits), and only with a port: list the bare name too to allow
  requests that name no port (as the defaults do).
* ``cors_origins``: origins whose pages may read the responses (CORS), compared like the
  patterns above; ``"*"`` allows any. They pass the ``Origin`` check too (``"*"`` turns it off).
  ``OPTIONS`` requests (preflights) are then answered here, ``204``, never reaching the
  application: with ``Access-Control-Allow-Methods: <cors_methods>``,
  ``Access-Control-Allow-Headers: <cors_allow_headers>`` (and the ``Mcp-Param-*`` headers the
  preflight asks for) and ``Access-Control-Max-Age:
  <cors_max_age>`` for an allowed origin, with no CORS header for another. Every response to a
  request from an allowed origin carries ``Access-Control-Allow-Origin`` (the origin, or ``*``),
  ``Access-Control-Expose-Headers: <cors_expose_headers>`` and ``Vary: Origin``. ``None`` (the
  default): no CORS, and ``OPTIONS`` goes to the application.
"""

from __future__ import annotations

import ipaddress
from collections.abc import Awaitable, Callable, Iterable
from typing import Final

from mcpbind.protocol.errors import INVALID_REQUEST
from mcpbind.transports.http._asgi import Headers, Message, Receive, Scope, Send
from mcpbind.transports.http.errors import EMPTY, HttpError, send_empty, send_error

__all__ = [
    "DEFAULT_CORS_ALLOW_HEADERS",
    "DEFAULT_CORS_EXPOSE_HEADERS",
    "LOCALHOST_HOSTS",
    "LOCALHOST_ORIGINS",
    "SecurityMiddleware",
    "loopback_allow_lists",
    "matches",
]

LOCALHOST_HOSTS: Final[tuple[str, ...]] = (
    "127.0.0.1",
    "127.0.0.1:*",
    "localhost",
    "localhost:*",
    "[::1]",
    "[::1]:*",
)
LOCALHOST_ORIGINS: Final[tuple[str, ...]] = tuple(
    f"{scheme}://{host}" for scheme in ("http", "https") for host in LOCALHOST_HOSTS
)
DEFAULT_CORS_ALLOW_HEADERS: Final = (
    "Content-Type, Accept, Authorization, Mcp-Session-Id, MCP-Protocol-Version, Last-Event-ID, "
    "Mcp-Method, Mcp-Name"
)
DEFAULT_CORS_EXPOSE_HEADERS: Final = "Mcp-Session-Id, MCP-Protocol-Version, WWW-Authenticate"

ASGIApp = Callable[[Scope, Receive, Send], Awaitable[None]]

# Results of the Host check kept per header value, up to this many values.
_CACHED_HOSTS: Final = 256


def loopback_allow_lists(host: str) -> tuple[tuple[str, ...], tuple[str, ...]] | None:
    """The ``Host`` and ``Origin`` allow-lists that keep DNS-rebinding protection on for a
    server bound to ``host``, or ``None`` when ``host`` is not a loopback one (a server reached
    under names it cannot know: the check is left to its configuration).

    Loopback means ``localhost`` or any loopback address (``127.0.0.0/8``, ``::1``): the
    localhost names, and the address itself when it is not one of them (say ``127.0.0.2``)."""
    name = host.strip("[]").lower()
    if name == "localhost":
        return LOCALHOST_HOSTS, LOCALHOST_ORIGINS
    try:
        address = ipaddress.ip_address(name)
    except ValueError:
        return None
    if not address.is_loopback:
        return None
    shown = f"[{address.compressed}]" if address.version == 6 else address.compressed
    if f"{shown}:*" in LOCALHOST_HOSTS:
        return LOCALHOST_HOSTS, LOCALHOST_ORIGINS
    hosts = (*LOCALHOST_HOSTS, shown, f"{shown}:*")
    origins = (
        *LOCALHOST_ORIGINS,
        *(f"{scheme}://{h}" for scheme in ("http", "https") for h in (shown, f"{shown}:*")),
    )
    return hosts, origins


def matches(value: str, patterns: Iterable[str]) -> bool:
    """``value`` (a ``Host`` or ``Origin`` header) against lower-case ``patterns``, where a
    trailing ``:*`` stands for a port, any port (of ASCII digits)."""
    value = value.lower()
    for pattern in patterns:
        if pattern.endswith(":*"):
            base = pattern[:-2]
            port = value[len(base) + 1 :]
            if value.startswith(base + ":") and port.isascii() and port.isdigit():
                return True
        elif value == pattern:
            return True
    return False


def _param_headers(scope: Scope) -> Headers:
    """The ``Mcp-Param-{Name}`` headers (2026-07-28: tool arguments mirrored, their names
    chosen by each tool) a preflight asks about, allowed as well."""
    for name, value in scope["headers"]:
        if name == b"access-control-request-headers" and b"mcp-param-" in value.lower():
            wanted = [h.strip() for h in value.split(b",") if h.strip().lower().startswith(b"mcp-param-")]
            return [(b"access-control-allow-headers", b", ".join(wanted))]
    return EMPTY


class SecurityMiddleware:
    """Checks ``Host`` and ``Origin`` and speaks CORS for the ASGI application ``app``; see the
    module's docstring for the options."""

    def __init__(
        self,
        app: ASGIApp,
        *,
        allowed_hosts: Iterable[str] | None = LOCALHOST_HOSTS,
        allowed_origins: Iterable[str] | None = LOCALHOST_ORIGINS,
        cors_origins: Iterable[str] | None = None,
        cors_methods: str = "GET, POST, DELETE, OPTIONS",
        cors_allow_headers: str = DEFAULT_CORS_ALLOW_HEADERS,
        cors_expose_headers: str = DEFAULT_CORS_EXPOSE_HEADERS,
        cors_max_age: int = 86400,
    ) -> None:
        self.app = app
        self.allowed_hosts = None if allowed_hosts is None else tuple(h.lower() for h in allowed_hosts)
        self.cors_origins = None if cors_origins is None else tuple(o.lower() for o in cors_origins)
        origins = None if allowed_origins is None else tuple(o.lower() for o in allowed_origins)
        if origins is not None and self.cors_origins is not None:
            origins = (*origins, *self.cors_origins) if "*" not in self.cors_origins else None
        self.allowed_origins = origins
        self._expose: Headers = [
            (b"access-control-expose-headers", cors_expose_headers.encode("latin-1")),
            (b"vary", b"Origin"),
        ]
        self._preflight: Headers = [
            (b"access-control-allow-methods", cors_methods.encode("latin-1")),
            (b"access-control-allow-headers", cors_allow_headers.encode("latin-1")),
            (b"access-control-max-age", b"%d" % cors_max_age),
        ]
        self._host_cache: dict[bytes, bool] = {}

    @property
    def checks_nothing(self) -> bool:
        """Whether every check is off and CORS too: the application may as well run unwrapped."""
        return self.allowed_hosts is None and self.allowed_origins is None and self.cors_origins is None

    def passes(self, host: bytes | None, origin: bytes | None) -> bool:
        """Whether a request with these ``Host`` and ``Origin`` values (raw; ``None``: absent)
        goes to the application as it is, with nothing to check or add: the usual request, a
        Host known to be allowed, no Origin to check, no CORS. (One that does not may still be
        allowed: :meth:`__call__` decides.)"""
        return (
            (self.allowed_hosts is None or (host is not None and self._host_cache.get(host) is True))
            and (origin is None or self.allowed_origins is None)
            and self.cors_origins is None
        )

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] == "http":
            host = origin = None
            for name, value in scope["headers"]:
                if name == b"host":
                    host = value
                elif name == b"origin":
                    origin = value
            if self.passes(host, origin):
                await self.app(scope, receive, send)
                return
            await self._screen(scope, receive, send, host, origin)
            return
        await self.app(scope, receive, send)

    async def _screen(
        self, scope: Scope, receive: Receive, send: Send, host: bytes | None, origin: bytes | None
    ) -> None:
        cors = EMPTY if self.cors_origins is None else self.cors_headers(origin)
        try:
            self.check(host, origin)
        except HttpError as refused:
            await send_error(send, refused, cors)
            return
        if self.cors_origins is not None:
            if scope["method"] == "OPTIONS":
                await send_empty(
                    send, 204, [*cors, *self._preflight, *_param_headers(scope)] if cors else EMPTY
                )
                return
            if cors:
                send = _adding_headers(send, cors)
        await self.app(scope, receive, send)

    def check(self, host: bytes | None, origin: bytes | None) -> None:
        """Raise :class:`~mcpbind.transports.http.errors.HttpError` (403) for a refused
        ``Host`` or ``Origin`` (raw header values; ``None``: absent)."""
        if self.allowed_hosts is not None:
            allowed = self._host_cache.get(host) if host is not None else False
            if allowed is None:
                assert host is not None
                allowed = matches(host.decode("latin-1"), self.allowed_hosts)
                if len(self._host_cache) < _CACHED_HOSTS:
                    self._host_cache[host] = allowed
            if not allowed:
                shown = None if host is None else host.decode("latin-1")
                raise HttpError(403, INVALID_REQUEST, f"Forbidden: Host {shown!r} is not allowed")
        if origin is not None and self.allowed_origins is not None:
            value = origin.decode("latin-1")
            if not matches(value, self.allowed_origins):
                raise HttpError(403, INVALID_REQUEST, f"Forbidden: Origin {value!r} is not allowed")

    def cors_headers(self, origin: bytes | None) -> Headers:
        """The CORS headers of a response to a request from ``origin`` (none when CORS is off
        or the origin is not one of ``cors_origins``)."""
        allowed = self.cors_origins
        if allowed is None or origin is None:
            return EMPTY
        if "*" in allowed:
            value = b"*"
        elif matches(origin.decode("latin-1"), allowed):
            value = origin
        else:
            return EMPTY
        return [(b"access-control-allow-origin", value), *self._expose]


def _adding_headers(send: Send, headers: Headers) -> Send:
    """``send``, adding ``headers`` to the start of the response."""

    async def send_with_headers(message: Message) -> None:
        if message["type"] == "http.response.start":
            message = {**message, "headers": [*message.get("headers", ()), *headers]}
        await send(message)

    return send_with_headers
