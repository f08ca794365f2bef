"""Running the Streamable HTTP app on an embedded HTTP server (:func:`serve_http`): uvicorn under
asyncio, hypercorn under trio, both bounding how long a slow client may hold a connection, and
neither flooding the log when the process runs out of file descriptors.

What each server bounds, and how:

* The request head: hypercorn closes a connection whose head is not complete within its
  ``keep_alive_timeout`` of the connection's start or of the previous response. uvicorn has no
  such timer (its keep-alive timer runs only between requests, and any byte received stops
  it), so its HTTP protocol class is extended here with one: a connection whose request head
  is not complete ``header_timeout`` seconds after it opened or after the first byte of a later
  request's head is closed. It uses uvicorn's protocol internals (``cycle``, ``loop``,
  ``transport``: :data:`_UVICORN_INTERNALS`); on a connection whose protocol lacks them, it
  touches nothing of uvicorn's and leaves the connection to plain uvicorn (no head timer),
  and says so once per server.
* The body: the application's own ``body_timeout`` (408; see :mod:`~mcpbind.transports.http.body`), since
  neither server has a body timer that would not also end long-lived SSE responses
  (hypercorn's ``read_timeout`` counts any read, and an SSE client sends nothing).
* Idle keep-alive connections: uvicorn's ``timeout_keep_alive``; on hypercorn the same timer
  as the request head, so the shorter of the two timeouts counts there.
* The head's size: both servers' h11 limit (16 KiB).

Out of file descriptors, the accept loops log an error with a traceback per failed ``accept()``:
trio's ten a second, asyncio's (CPython 3.11) thousands, since it goes on calling ``accept()``
up to ``backlog`` times after the first failure and schedules a retry for each (whose
callbacks fail again, and log again, when the server closes). Here uvicorn listens on
sockets of :class:`~mcpbind.transports.http.server.listeners.Listener`, whose ``accept()``
fails once per burst and then reports nothing to accept, which ends asyncio's loop; and what is
still logged goes through a :class:`LogRateLimiter` (once per 10 s, with a count of the rest)
while the server runs.

The listening sockets are bound here, or given: sockets another process bound and shares with
this one (the workers of ``mcpbind serve --workers N``; see :mod:`mcpbind.server.workers`).
"""

from __future__ import annotations

import logging
import signal
import socket
import time
from collections.abc import Awaitable, Callable, Sequence
from contextlib import ExitStack
from typing import TYPE_CHECKING, Any, Final, Literal

from mcpbind.transports.http.endpoint import ServerEndpoint
from mcpbind.transports.http.security import LOCALHOST_HOSTS, loopback_allow_lists
from mcpbind.transports.http.server.app import StreamableHTTPApp
from mcpbind.transports.http.server.listeners import bind_listeners

if TYPE_CHECKING:
    import asyncio  # (imported where used: an app served elsewhere does not load it)

__all__ = ["MAX_HEADER_SIZE", "LogRateLimiter", "serve_asyncio", "serve_http", "serve_trio"]

log = logging.getLogger("mcpbind.http")

# The largest request head the servers accept (h11's default, set explicitly for both).
MAX_HEADER_SIZE: Final = 16 * 1024

_ACCEPT_ERROR: Final = "socket.accept() out of system resource"  # asyncio's message
_TRIO_ACCEPT_LOGGER: Final = "trio.serve_listeners"
# What the request-head timer uses of uvicorn's HTTP protocol instances (see _uvicorn_protocol).
_UVICORN_INTERNALS: Final = ("cycle", "loop", "transport")


class LogRateLimiter:
    """Lets at most ``burst`` events through per window of ``interval`` seconds (a window
    starts with the first event after the last one ended) and counts the rest.

    :meth:`allow` returns ``None`` for an event to drop, else how many were dropped since the
    last one let through (to be mentioned with it).
    """

    def __init__(
        self, interval: float = 10.0, burst: int = 1, clock: Callable[[], float] = time.monotonic
    ) -> None:
        if interval <= 0 or burst < 1:
            raise ValueError("interval must be positive and burst at least 1")
        self.interval = interval
        self.burst = burst
        self._clock = clock
        self._window_start = -float("inf")
        self._passed = 0
        self._dropped = 0

    def allow(self) -> int | None:
        now = self._clock()
        if now - self._window_start >= self.interval:
            self._window_start = now
            self._passed = 0
        if self._passed >= self.burst:
            self._dropped += 1
            return None
        self._passed += 1
        dropped, self._dropped = self._dropped, 0
        return dropped


class _RateLimitFilter(logging.Filter):
    """A logging filter letting a logger's records through a :class:`LogRateLimiter`."""

    def __init__(self, limiter: LogRateLimiter) -> None:
        super().__init__()
        self.limiter = limiter

    def filter(self, record: logging.LogRecord) -> bool:
        dropped = self.limiter.allow()
        if dropped is None:
            return False
        if dropped:
            record.msg = (
                f"{record.msg} ({dropped} more like it in the last {self.limiter.interval:g} s not logged)"
            )
        return True


def _limit_asyncio_accept_errors(limiter: LogRateLimiter) -> Callable[[], None]:
    """Route the running loop's accept errors through ``limiter``; returns the undo."""
    import asyncio

    loop = asyncio.get_running_loop()
    previous = loop.get_exception_handler()

    def handler(loop: asyncio.AbstractEventLoop, context: dict[str, Any]) -> None:
        if context.get("message") == _ACCEPT_ERROR:
            dropped = limiter.allow()
            if dropped is None:
                return
            if dropped:
                context = {
                    **context,
                    "message": f"{_ACCEPT_ERROR} ({dropped} more like it in the last "
                    f"{limiter.interval:g} s not logged)",
                }
        if previous is not None:
            previous(loop, context)
        else:
            loop.default_exception_handler(context)

    loop.set_exception_handler(handler)

    def undo() -> None:
        if loop.get_exception_handler() is handler:
            loop.set_exception_handler(previous)

    return undo


def _uvicorn_protocol(header_timeout: float) -> type[asyncio.Protocol]:
    """uvicorn's HTTP protocol (httptools if installed, else h11) with a request-head timer."""
    from uvicorn.protocols.http.auto import AutoHTTPProtocol

    base: Any = AutoHTTPProtocol
    warned: list[bool] = []

    class HeadTimedProtocol(base):  # type: ignore[misc]
        _head_timer: asyncio.TimerHandle | None = None
        _timed = False  # (only where uvicorn's internals are there)

        def connection_made(self, transport: asyncio.BaseTransport) -> None:
            super().connection_made(transport)
            if not all(hasattr(self, name) for name in _UVICORN_INTERNALS):
                if not warned:
                    warned.append(True)
                    log.warning(
                        "this uvicorn's HTTP protocol lacks what mcpbind's request-head timer "
                        "uses (%s): header_timeout is not applied",
                        ", ".join(_UVICORN_INTERNALS),
                    )
                return
            self._timed = True
            self._arm()

        def data_received(self, data: bytes) -> None:
            if not self._timed:
                super().data_received(data)
                return
            cycle = self.cycle
            super().data_received(data)
            if self.cycle is not cycle:  # a request head came in whole: the app has it
                self._disarm()
            elif self._head_timer is None and _between_requests(cycle):
                self._arm()  # the first bytes of another request's head

        def connection_lost(self, exc: Exception | None) -> None:
            self._disarm()
            super().connection_lost(exc)

        def _arm(self) -> None:
            self._head_timer = self.loop.call_later(header_timeout, self._head_timed_out)

        def _disarm(self) -> None:
            timer, self._head_timer = self._head_timer, None
            if timer is not None:
                timer.cancel()

        def _head_timed_out(self) -> None:
            self._head_timer = None
            if _between_requests(self.cycle) and not self.transport.is_closing():
                log.debug("no complete request head within %s s: closing the connection", header_timeout)
                self.transport.close()

    return HeadTimedProtocol


def _between_requests(cycle: Any) -> bool:
    """Whether a uvicorn connection has no request in progress (none yet, or the last answered)."""
    return cycle is None or getattr(cycle, "response_complete", False) is True


async def serve_asyncio(
    app: Any,
    host: str,
    port: int,
    *,
    header_timeout: float | None,
    keep_alive_timeout: float,
    limiter: LogRateLimiter | None = None,
    sockets: Sequence[socket.socket] | None = None,
) -> None:
    """Serve ``app`` on uvicorn until cancelled, on ``sockets`` if given (closed at the end),
    else on sockets bound to ``host`` and ``port``."""
    import uvicorn

    config = uvicorn.Config(
        app,
        lifespan="on",
        access_log=False,
        timeout_graceful_shutdown=3,
        timeout_keep_alive=keep_alive_timeout,  # type: ignore[arg-type]  # (a float works: call_later)
        h11_max_incomplete_event_size=MAX_HEADER_SIZE,
        http=_uvicorn_protocol(header_timeout) if header_timeout is not None else "auto",
    )
    sockets = list(sockets) if sockets is not None else bind_listeners(host, port)
    server = uvicorn.Server(config)
    undo = _limit_asyncio_accept_errors(limiter or LogRateLimiter())
    try:
        for sock in sockets:
            name = sock.getsockname()
            where = f"[{name[0]}]" if sock.family == socket.AF_INET6 else name[0]
            logging.getLogger("uvicorn.error").info("Uvicorn running on http://%s:%d", where, name[1])
        await server.serve(sockets)
    finally:
        undo()
        # Cancelled, uvicorn leaves its listening servers registered with the loop: closed here,
        # before their sockets, or a later socket given the same descriptor is never polled.
        for listening in getattr(server, "servers", ()):
            listening.close()
        for sock in sockets:
            sock.close()


async def serve_trio(
    app: Any,
    host: str,
    port: int,
    *,
    header_timeout: float | None,
    keep_alive_timeout: float,
    limiter: LogRateLimiter | None = None,
    sockets: Sequence[socket.socket] | None = None,
) -> None:
    """Serve ``app`` on hypercorn under trio until cancelled, on ``sockets`` if given (closed
    at the end), else on sockets bound to ``host`` and ``port``.

    In the main thread, SIGINT and SIGTERM stop it gracefully, as uvicorn does: no new
    connections, requests in progress have ``graceful_timeout`` to end, the application's
    lifespan ends; then the signal is raised again (SIGINT: ``KeyboardInterrupt``). Without
    this, trio's ``KeyboardInterrupt`` strikes whichever task runs, and hypercorn's lifespan
    may swallow it, leaving the server running."""
    import trio
    from hypercorn.config import Config
    from hypercorn.trio import serve

    config = Config()
    # Bound here, so that an address in use fails as plainly as on asyncio; hypercorn owns
    # (and closes) the descriptors from now on.
    listeners = sockets if sockets is not None else bind_listeners(host, port)
    config.bind = [f"fd://{sock.detach()}" for sock in listeners]
    config.accesslog = None
    config.graceful_timeout = 3.0
    # One timer covers the wait for a request head and the idle time between requests.
    config.keep_alive_timeout = min(keep_alive_timeout, header_timeout or keep_alive_timeout)
    config.h11_max_incomplete_size = MAX_HEADER_SIZE
    config.read_timeout = None  # (it would end SSE responses, whose client sends nothing)
    accept_log = logging.getLogger(_TRIO_ACCEPT_LOGGER)
    limit = _RateLimitFilter(limiter or LogRateLimiter())
    accept_log.addFilter(limit)
    received: list[int] = []
    try:
        with ExitStack() as stack:
            trigger: Callable[[], Awaitable[None]] | None = None
            try:
                signals = stack.enter_context(trio.open_signal_receiver(signal.SIGINT, signal.SIGTERM))
            except RuntimeError:  # not the main thread: signals are the program's business
                pass
            else:

                async def signalled() -> None:
                    async for signum in signals:
                        received.append(signum)
                        return

                trigger = signalled
            await serve(app, config, shutdown_trigger=trigger)
    finally:
        accept_log.removeFilter(limit)
    if received:
        signal.raise_signal(received[0])


async def serve_http(
    server_or_app: ServerEndpoint | StreamableHTTPApp[ServerEndpoint],
    host: str = "127.0.0.1",
    port: int = 8000,
    *,
    backend: Literal["asyncio", "trio"] | None = None,
    header_timeout: float | None = 10.0,
    keep_alive_timeout: float = 5.0,
    wrap: Callable[[StreamableHTTPApp[ServerEndpoint]], Any] | None = None,
    sockets: Sequence[socket.socket] | None = None,
    ready: Callable[[], None] | None = None,
    **app_options: Any,
) -> None:
    """Serve over Streamable HTTP at ``http://host:port/mcp`` until cancelled: on uvicorn under
    asyncio, on hypercorn under trio (``backend`` names the running loop; it is checked).

    ``app_options`` go to
    :class:`~mcpbind.transports.http.server.app.StreamableHTTPApp` (``body_timeout`` bounds the time a POST
    body may take). Bound to a host other than a loopback address, the Host check is off unless
    ``allowed_hosts`` is given (the Origin check stays).

    Slow connections are bounded too: a request head must be complete ``header_timeout``
    seconds after the connection opened or after the previous response (``None``: no limit),
    else the connection is closed; an idle connection is closed after ``keep_alive_timeout``
    seconds (on hypercorn one timer serves both: the shorter counts). Errors of the accept loop
    (out of file descriptors) are logged once per 10 s, with a count of those left out (see
    the module's docstring). ``wrap``: ASGI middleware to serve the app behind (given the app,
    it returns the application served: an authorization middleware, say).

    ``sockets``: listening sockets to serve on instead of binding ``host`` and ``port`` (say,
    sockets inherited from a process that shares them among several workers; see
    :func:`~mcpbind.transports.http.server.listeners.adopt_listeners`); they are closed at the
    end. ``host`` still decides the default ``allowed_hosts``. ``ready``: called once the
    application has started (its ASGI lifespan startup is complete), when the server is about
    to accept connections.
    """
    import sniffio

    running = sniffio.current_async_library()
    if backend is not None and backend != running:
        raise RuntimeError(f"serve_http(backend={backend!r}) called from {running}")
    if isinstance(server_or_app, StreamableHTTPApp):
        if app_options:
            raise TypeError("app options are for a server; this app is built already")
        app = server_or_app
    else:
        if "allowed_hosts" not in app_options:
            allow = loopback_allow_lists(host)
            if allow is None:
                app_options["allowed_hosts"] = None
            elif allow[0] != LOCALHOST_HOSTS:
                app_options["allowed_hosts"] = allow[0]
                app_options.setdefault("allowed_origins", allow[1])
        app = StreamableHTTPApp(server_or_app, **app_options)
    served = app if wrap is None else wrap(app)
    if ready is not None:
        served = _announcing_startup(served, ready)
    serve = serve_trio if running == "trio" else serve_asyncio
    await serve(
        served,
        host,
        port,
        header_timeout=header_timeout,
        keep_alive_timeout=keep_alive_timeout,
        sockets=sockets,
    )


def _announcing_startup(app: Any, ready: Callable[[], None]) -> Callable[..., Awaitable[None]]:
    """``app``, calling ``ready()`` once it has told the server its lifespan startup is complete."""

    async def announcing(scope: Any, receive: Any, send: Callable[[Any], Awaitable[None]]) -> None:
        if scope["type"] != "lifespan":
            await app(scope, receive, send)
            return

        async def watched(message: Any) -> None:
            await send(message)
            if message["type"] == "lifespan.startup.complete":
                ready()

        await app(scope, receive, watched)

    return announcing
