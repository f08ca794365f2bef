"""One server behind a proxy: the connection to it (kept up, restarted when it fails), and the
forwarding of each request a client of the proxy sends it.

The proxy is a client of the server (:class:`~mcpbind.client.client.Client`, over stdio or
HTTP, negotiating the newest version both speak) and forwards requests with their params and
results as raw JSON (:mod:`mcpbind.proxy.specs`). Where the two sides speak different eras
(:mod:`mcpbind.proxy.eras`) it translates:

* a stateless (2026-07-28) request to a server of a session: the envelope leaves ``_meta``; a
  question the server asks mid-call ends the round with an ``InputRequiredResult`` while the
  server's call is held for the client's retry (:mod:`mcpbind.proxy.held`);
* a session's request to a stateless server: the envelope (the version, the front client's
  capabilities and identity) goes into ``_meta``; the server's ``InputRequiredResult`` is
  answered by asking the front client each question mid-call, then retried.

Progress travels with the request (the server's progress notifications reach the client that
asked, under its own token). Log messages and questions go to the client of the call they
belong to (:mod:`mcpbind.proxy.calls`); log messages outside any call to every session client.
Cancelling a forwarded request (its client went away, or cancelled it) cancels it upstream.
The server's list changes and resource updates go to ``on_change``: a session's server sends
them as notifications (resources it is subscribed to for the clients that asked, each counted
once per client and released when that client's session ends); a stateless server tells of
them on a listen stream the proxy keeps open (:mod:`mcpbind.proxy.watch`).
"""

from __future__ import annotations

import logging
from collections.abc import Awaitable, Callable
from contextlib import AbstractAsyncContextManager
from typing import Any, Final

import anyio
import msgspec
from anyio.abc import TaskGroup, TaskStatus
from msgspec import UNSET

from mcpbind import types
from mcpbind.client.client import Client
from mcpbind.client.remote import RemoteServer
from mcpbind.protocol.envelope import LOG_LEVEL, envelope_meta
from mcpbind.protocol.errors import INTERNAL_ERROR, McpError
from mcpbind.protocol.stateless import MRTR_METHODS
from mcpbind.proxy.bridge import RoundBridge
from mcpbind.proxy.calls import FrontCall, InFlight
from mcpbind.proxy.eras import stamp_envelope, strip_envelope
from mcpbind.proxy.held import HeldCalls
from mcpbind.proxy.specs import ASKED_OF_CLIENT, raw_notification, raw_request
from mcpbind.proxy.subscriptions import Subscriptions
from mcpbind.proxy.to_clients import ToClients
from mcpbind.proxy.watch import Watch
from mcpbind.runtime.context import RequestContext
from mcpbind.runtime.session import Session

__all__ = ["Connector", "Upstream", "UpstreamUnavailable"]

log = logging.getLogger("mcpbind.proxy")

methods = types.methods

Connector = Callable[[Client], AbstractAsyncContextManager[RemoteServer]]
"""Opens the proxy's connection to its server with the client it is given (``Client.connect_stdio``
or ``Client.connect_url`` with their arguments)."""

# What the server may tell its clients, which the proxy passes on (see ``on_change``).
_CHANGES: Final = (
    methods.NOTIFICATIONS_TOOLS_LIST_CHANGED.method,
    methods.NOTIFICATIONS_PROMPTS_LIST_CHANGED.method,
    methods.NOTIFICATIONS_RESOURCES_LIST_CHANGED.method,
    methods.NOTIFICATIONS_RESOURCES_UPDATED.method,
)
_LOG_RANKS: Final = ("debug", "info", "notice", "warning", "error", "critical", "alert", "emergency")


class UpstreamUnavailable(McpError):
    """The server behind the proxy cannot be reached (not started yet, or restarting after a
    failure): a request forwarded to it fails with this error, code -32603."""

    def __init__(self, name: str, reason: str) -> None:
        super().__init__(INTERNAL_ERROR, f"Upstream server {name!r} is unavailable: {reason}")
        self.reason = reason


class Upstream:
    """A server behind the proxy, connected with ``connect`` and kept connected by :meth:`run`.

    * ``name``: what errors and logs call it.
    * ``request_timeout``: how long a forwarded request waits for the server (``None``: as long
      as the client waits).
    * ``connect_timeout``: how long a request waits for the server to be connected, while a
      first connection or a restart is under way (after an attempt that failed, requests fail
      at once with the reason until one succeeds).
    * ``restart``: reconnect (restart a stdio server) after the connection fails, waiting 0.5 s
      then twice as long each time it fails again, up to 30 s.
    * ``max_in_flight``: requests forwarded at once; more wait for a place.
    * ``input_timeout`` and ``max_held``: for stateless clients in front of a server of a
      session, how long a call that asked a question waits for the client's retry, and how
      many calls may wait so (see :mod:`mcpbind.proxy.held`).
    * ``protocol_version``: pin the version spoken to the server (else the newest both speak).

    ``on_change(method, params)`` is called with what the server tells of changes (list
    changes, resource updates; ``None`` params for a list change), and with each list change
    after a reconnection (the server may have changed meanwhile).
    """

    def __init__(
        self,
        connect: Connector,
        *,
        name: str = "upstream",
        request_timeout: float | None = None,
        connect_timeout: float = 10.0,
        restart: bool = True,
        max_in_flight: int = 256,
        input_timeout: float = 300.0,
        max_held: int = 1024,
        max_input_rounds: int = 8,
        protocol_version: str | None = None,
    ) -> None:
        if max_in_flight < 1:
            raise ValueError("max_in_flight must be at least 1")
        self.name = name
        self._connect = connect
        self.request_timeout = request_timeout
        self.connect_timeout = connect_timeout
        self.restart = restart
        self.max_input_rounds = max_input_rounds
        self.held = HeldCalls(input_timeout=input_timeout, max_held=max_held)
        self.in_flight = InFlight()
        self.rounds = RoundBridge(
            self.held,
            self.in_flight,
            lambda: self._tasks,
            max_input_rounds=max_input_rounds,
            request_timeout=request_timeout,
        )
        self.on_change: Callable[[str, Any], Awaitable[None]] | None = None
        self._places = anyio.Semaphore(max_in_flight)
        self._remote: RemoteServer | None = None
        self._connected = anyio.Event()
        # Set once the current connection is found closed and forgotten (``_remote`` cleared).
        self._lost = anyio.Event()
        self._given_up = False  # the connection failed and is not made again (``restart`` off)
        self._tried = anyio.Event()  # the first connection was made, or failed
        self._last_failed = False  # the last attempt to connect failed
        self._watch: Watch | None = None  # a stateless server's changes (see .watch)
        self._tasks: TaskGroup | None = None
        self._reason = "not connected yet"
        self._restarts = 0
        # Kept to be set again on a new connection: subscriptions (with how many clients hold
        # each) and the log level asked for.
        self.subscriptions = Subscriptions(
            self._server, lambda: (self._remote, self._watch), lambda: self._tasks, connect_timeout
        )
        self._level: str | None = None
        # The questions' params and answers stay raw (``raw_params``), which the typed
        # handler options do not say.
        self.to_clients = ToClients(self.in_flight)
        ask: Any = self.to_clients.ask
        self.client = Client(
            "mcpbind-proxy",
            _version(),
            sampling=ask,
            sampling_tools=True,
            sampling_context=True,
            elicitation=ask,
            elicitation_modes=("form", "url"),
            roots=ask,
            logging=self.to_clients.log,
            notification_handlers={method: self._changed for method in _CHANGES},
            protocol_version=protocol_version,
            request_timeout=request_timeout,
            max_input_rounds=max_input_rounds,
            raw_params=ASKED_OF_CLIENT,
        )

    # -- the connection -------------------------------------------------------------------

    @property
    def remote(self) -> RemoteServer | None:
        """The server as connected now (``None`` while it is not)."""
        return self._remote

    @property
    def restarts(self) -> int:
        """How many times the connection was made again after failing."""
        return self._restarts

    @property
    def status(self) -> str:
        """``"up"`` or why it is not."""
        return "up" if self._remote is not None else self._reason

    async def run(
        self, *, fail_fast: bool = True, task_status: TaskStatus[RemoteServer] = anyio.TASK_STATUS_IGNORED
    ) -> None:
        """Connect and stay connected until cancelled; started (``task_status``, with the server)
        once first connected. A first connection that fails raises with ``fail_fast`` (so a
        proxy that cannot reach its server says so at once); later failures, and the first
        without ``fail_fast`` (a gateway's servers, each on its own), are retried (``restart``)."""
        async with anyio.create_task_group() as tasks:
            self._tasks = tasks
            started = False
            delay = 0.5
            while True:
                try:
                    async with self._connect(self.client) as remote, anyio.create_task_group() as watching:
                        await self._resume(remote)
                        if remote.stateless:
                            self._watch = Watch(
                                remote, self._tell, frozenset(self.subscriptions.counts), self.connect_timeout
                            )
                            await watching.start(self._watch.run)
                        self._lost = anyio.Event()
                        self._remote = remote
                        self._connected.set()
                        self._tried.set()
                        self._last_failed = False
                        if not started:
                            started = True
                            task_status.started(remote)
                        else:
                            self._restarts += 1
                            log.warning("%s: connected again", self.name)
                            await self._announce_restart()
                        delay = 0.5
                        await remote.session.wait_closed()
                        self._reason = "the connection to it closed"
                        watching.cancel_scope.cancel()
                except Exception as exc:
                    if not started and fail_fast:
                        raise
                    self._tried.set()
                    self._last_failed = True
                    self._reason = f"{type(exc).__name__}: {exc}" if str(exc) else type(exc).__name__
                finally:
                    self._remote = None
                    self._watch = None
                    if self._connected.is_set():  # (one never set still has its waiters)
                        self._connected = anyio.Event()
                    self.held.close()
                    self._lost.set()
                if not self.restart:
                    self._reason = f"{self._reason} (not restarted)"
                    self._given_up = True
                    log.error("%s: %s", self.name, self._reason)
                    await anyio.sleep_forever()
                log.warning("%s: %s; connecting again in %.1f s", self.name, self._reason, delay)
                await anyio.sleep(delay)
                delay = min(delay * 2, 30.0)

    async def _resume(self, remote: RemoteServer) -> None:
        """Set on a new connection what clients asked of the old one."""
        if remote.stateless:
            return
        try:
            if self._level is not None and remote.server_capabilities.logging is not UNSET:
                await remote.set_logging_level(self._level)  # type: ignore[arg-type]
            for uri in self.subscriptions.counts:
                await remote.subscribe_resource(uri)
        except McpError as exc:  # the server changed: its clients are told of list changes
            log.warning("%s: what clients asked of it before could not be asked again: %s", self.name, exc)

    async def tried(self) -> None:
        """Until the first connection was made, or failed."""
        await self._tried.wait()

    async def connected(self) -> RemoteServer:
        """The server, once connected."""
        while self._remote is None:
            await self._connected.wait()
        return self._remote

    async def _announce_restart(self) -> None:
        if self.on_change is None:
            return
        for method in _CHANGES[:3]:
            await self.on_change(method, None)

    async def _server(self) -> RemoteServer:
        """The server as connected now, else once connected again (waiting at most
        ``connect_timeout``): :class:`UpstreamUnavailable` when it is not in time, or will not
        be (``restart`` off), or at once while the last attempt to connect failed (the next is
        not under way yet). A connection found closed (its requests failed already) is not
        used again, even before :meth:`run` has noticed."""
        with anyio.move_on_after(self.connect_timeout):
            while True:
                remote = self._remote
                if remote is not None and not remote.session.closed:
                    return remote
                if remote is not None:
                    await self._lost.wait()
                elif self._given_up or self._last_failed:
                    break
                else:
                    await self._connected.wait()
        raise UpstreamUnavailable(self.name, self._reason)

    # -- forwarding ----------------------------------------------------------------------

    async def forward(self, method: str, params: msgspec.Raw, ctx: RequestContext[Any]) -> msgspec.Raw:
        """Forward the request ``method`` (its ``params`` as received) that a client sent the
        proxy (``ctx``, its context); the server's result as received. An error answer raises
        :class:`McpError` with the server's code, message and data."""
        async with self._places:
            remote = await self._server()
            envelope = ctx.envelope
            front_stateless = envelope is not None
            if envelope is None:
                self.to_clients.seen(ctx.session)
            elif envelope.log_level is not None and not remote.stateless:
                # The level a stateless request asks for is the session's to the server.
                await self.set_level(envelope.log_level)
            if front_stateless and not remote.stateless and method in MRTR_METHODS:
                return await self.rounds.held_round(remote, method, params, ctx)
            sent: Any
            if front_stateless == remote.stateless:
                sent = params if params else UNSET
            elif front_stateless:
                sent = strip_envelope(params)
            else:
                sent = stamp_envelope(params, self._envelope(remote, ctx))
            progress = _progress_to(ctx) if ctx.progress_token is not None else None
            spec = raw_request(method)
            with self.in_flight.tracking(FrontCall(ctx)):
                raw = await remote.session.request(
                    spec, sent, timeout=self.request_timeout, progress=progress
                )
                if remote.stateless and not front_stateless and method in MRTR_METHODS:
                    raw = await self.rounds.answer_rounds(remote, method, sent, raw, progress)
                # What the server sent before its answer (log messages) goes out before it.
                await remote.session.notifications_handled()
            return raw

    async def notify(self, method: str, params: msgspec.Raw) -> None:
        """Pass a client's notification (``notifications/roots/list_changed``) to the server
        (dropped while it is not connected, or when it speaks a stateless version)."""
        remote = self._remote
        if remote is None or remote.stateless:
            return
        await remote.session.notify(raw_notification(method), params if params else UNSET)

    @property
    def subscribed(self) -> dict[str, int]:
        """The resources the server is asked to tell of, with how many subscriptions of the
        proxy's clients hold each (a copy)."""
        return dict(self.subscriptions.counts)

    async def subscribe(self, uri: str) -> None:
        """A client subscribes to ``uri`` (see :class:`~mcpbind.proxy.subscriptions.Subscriptions`)."""
        await self.subscriptions.subscribe(uri)

    async def unsubscribe(self, uri: str) -> None:
        """A client unsubscribes from ``uri``."""
        await self.subscriptions.unsubscribe(uri)

    async def subscribe_for(self, session: Session, uri: str) -> None:
        """``session``'s client subscribes to ``uri``, until it unsubscribes or its session ends."""
        await self.subscriptions.subscribe_for(session, uri)

    async def unsubscribe_for(self, session: Session, uri: str) -> None:
        """``session``'s client unsubscribes from ``uri``."""
        await self.subscriptions.unsubscribe_for(session, uri)

    async def set_level(self, level: str) -> None:
        """Ask the server for log messages from ``level`` up: the lowest level any client asked
        for (with ``logging/setLevel``, or in a stateless request) wins; each client gets what
        it asked for, filtered by the proxy."""
        if self._level is not None and _LOG_RANKS.index(self._level) <= _LOG_RANKS.index(level):
            return
        remote = await self._server()
        if not remote.stateless and remote.server_capabilities.logging is not UNSET:
            await remote.set_logging_level(level)  # type: ignore[arg-type]
        self._level = level

    def _envelope(self, remote: RemoteServer, ctx: RequestContext[Any]) -> dict[str, Any]:
        """The stateless envelope of a session's request: the front client's capabilities and
        identity, and the level of log messages its session asked for."""
        meta = envelope_meta(remote.protocol_version, ctx.peer_capabilities, ctx.peer_info)
        meta[LOG_LEVEL] = ctx.session.log_level
        return meta

    # -- what the server sends -------------------------------------------------------------

    async def _changed(self, params: Any, ctx: RequestContext[Any]) -> None:
        await self._tell(ctx.method, params)

    async def _tell(self, method: str, params: Any) -> None:
        if self.on_change is not None:
            await self.on_change(method, params)


def _progress_to(ctx: RequestContext[Any]) -> Callable[[float, float | None, str | None], Awaitable[None]]:
    return ctx.report_progress


def _version() -> str:
    try:
        from importlib.metadata import version

        return version("mcpbind")
    except Exception:
        return "0"
