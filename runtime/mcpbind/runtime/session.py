"""The session driver: the only place that knows about tasks, cancel scopes and timeouts.

It feeds received messages to the :class:`~mcpbind.protocol.connection.Connection` and acts on the
events: each request's handler run (bounded) and answered, responses to the callers waiting on
them, cancellations into the handlers' cancel scopes, progress to the callers' callbacks.
Messages come either from the transport's ``receive()``, read by the session's own tasks
(:class:`~mcpbind.runtime.workers.Workers`: the task that reads runs what it reads, handing
reading over only when a handler waits), or from whoever receives them, who hands each to
:meth:`Session.feed` (inline: no task of the session's own). What the session sends, and the
requests it sent, are :class:`~mcpbind.runtime.sender.Sender`'s, which it extends. anyio only,
so the same code runs on asyncio and on trio.
"""

from __future__ import annotations

import contextvars
import functools
import logging
import math
import sys
from collections.abc import Callable, Mapping
from types import CoroutineType, TracebackType
from typing import TypeVar

import anyio
import anyio.abc
import msgspec

from mcpbind import fastpath, types
from mcpbind.exception_groups import only_error
from mcpbind.fastpath import awaited, finish, first_step
from mcpbind.protocol.connection import (
    CancelRequested,
    Connection,
    ErrorReceived,
    Event,
    NotificationReceived,
    ProgressReceived,
    Reply,
    RequestReceived,
    ResponseReceived,
    SessionReady,
    UnmatchedResponse,
)
from mcpbind.protocol.envelope import params_meta
from mcpbind.protocol.errors import CONNECTION_CLOSED, INTERNAL_ERROR, METHOD_NOT_FOUND, McpError
from mcpbind.protocol.jsonrpc import RequestId
from mcpbind.protocol.stateless import MRTR_METHODS
from mcpbind.runtime.context import LOG_LEVELS as LOG_LEVELS
from mcpbind.runtime.context import ClientContext, RequestContext, ServerContext, require_logging, sends_logs
from mcpbind.runtime.handlers import HANDLED_BY_SESSION, HandlerRegistry, NotificationHandler, RequestHandler
from mcpbind.runtime.lifespan import Lifespan
from mcpbind.runtime.notification_queue import NotificationQueue, run_in
from mcpbind.runtime.rounds import RoundsPolicy, serve_in_rounds
from mcpbind.runtime.sender import SESSION_CLOSED, ProgressCallback, Sender, Spawn
from mcpbind.runtime.workers import Workers
from mcpbind.transports.base import Transport

if sys.version_info < (3, 11):  # pragma: no cover
    from exceptiongroup import BaseExceptionGroup

__all__ = [
    "ClientContext",
    "HANDLED_BY_SESSION",
    "HandlerRegistry",
    "NotificationHandler",
    "ProgressCallback",
    "RequestContext",
    "RequestHandler",
    "ServerContext",
    "Session",
    "Spawn",
    "require_logging",
    "sends_logs",
]

log = logging.getLogger("mcpbind")

R = TypeVar("R")


class Session(Sender):
    """Runs one connection over one transport until either side closes it.

    ``request_timeout`` is the default for requests this side sends (``None``: wait forever);
    ``max_concurrent_requests`` handlers run at once and up to ``max_pending_requests``
    received requests may wait or run; past that a request is answered with an error at once.
    ``max_queued_bytes`` of messages given to :meth:`send_soon` may wait for a transport that
    cannot take them at once (see there). The handler mappings are used as given, not copied.

    A session runs in one of two ways:

    * with tasks of its own, ``async with session:``: a reader task takes messages from the
      transport's ``receive()`` and a pool of runner tasks runs the handlers (stdio, memory);
    * inline, after :meth:`start_inline`: whoever receives a message hands it to :meth:`feed`,
      which acts on it in the calling task, running a request's handler there too, and
      :meth:`end` ends it. Such a session holds no task at all between messages (Streamable HTTP,
      where each message comes in a request of its own that is a task already).

    Context variables: each received request and notification is handled in a copy of its own
    of one context, so what a handler sets is seen by nothing else: with tasks of its own, the
    context that was current at ``async with session:`` (where :meth:`Server.run
    <mcpbind.server.server.Server.run>` was awaited); inline, the context of the task that calls
    :meth:`feed` (over Streamable HTTP, that of the HTTP request carrying the message, which
    the ASGI server derives from where it was started, plus what ASGI middleware set).

    The end of input (with tasks of its own): once the peer has closed its side (the
    transport's ``receive()`` raised ``anyio.EndOfStream``, as at the end of stdin), requests it
    sent before are still handled and answered, for up to ``shutdown_grace_period`` seconds;
    those still running then are cancelled and answered with a ``CONNECTION_CLOSED`` error.
    Requests this side sent fail with ``CONNECTION_CLOSED`` at once (no answer can come any
    more), and :meth:`wait_closed` returns once everything is answered. When the peer is gone
    altogether (the transport broke, or an answer could not be sent), running handlers are
    cancelled at once instead, since nobody would read their answers.
    """

    __slots__ = (
        "_context",
        "_ended",
        "_finished",
        "_handlers",
        "_inline",
        "_input_done",
        "_notifications",
        "_peer_gone",
        "_ready",
        "_ready_event",
        "_task_group",
        "_turns",
        "_workers",
        "_workers_group",
        "expose_internal_errors",
        "lifespan",
        "log_level",
        "max_concurrent_requests",
        "max_pending_requests",
        "notification_handlers",
        "on_input_end",
        "request_handlers",
        "rounds_policy",
        "scope_maker",
        "serves_rounds",
        "shutdown_grace_period",
    )

    def __init__(
        self,
        transport: Transport,
        connection: Connection,
        *,
        request_handlers: Mapping[str, RequestHandler] | None = None,
        notification_handlers: Mapping[str, NotificationHandler] | None = None,
        request_timeout: float | None = 60.0,
        max_concurrent_requests: int = 64,
        max_pending_requests: int = 1024,
        expose_internal_errors: bool = False,
        shutdown_grace_period: float = 5.0,
        max_queued_bytes: int = 1 << 20,
    ) -> None:
        super().__init__(
            transport, connection, request_timeout=request_timeout, max_queued_bytes=max_queued_bytes
        )
        # Shared with the Server or Client that made the session: a copy per session would
        # cost more memory than all the rest of an idle HTTP session.
        self.request_handlers: Mapping[str, RequestHandler] = (
            request_handlers if request_handlers is not None else {}
        )
        self.notification_handlers: Mapping[str, NotificationHandler] = (
            notification_handlers if notification_handlers is not None else {}
        )
        self.max_pending_requests = max_pending_requests
        self.expose_internal_errors = expose_internal_errors
        self.shutdown_grace_period = shutdown_grace_period
        # ``max_concurrent_requests`` handlers run at once: with tasks of its own, the session's
        # Workers see to it; inline, callers wait for a place in ``_turns`` (made at the first
        # request: an idle inline session holds as little as it can).
        self.max_concurrent_requests = max_concurrent_requests
        self._turns: fastpath.Semaphore | None = None
        self._input_done: anyio.Event | None = None
        # Streams, events and task groups are made when first needed: an idle inline session
        # has none (an asyncio Event alone costs more than a kilobyte).
        self._handlers: dict[RequestId, anyio.CancelScope] = {}
        self._task_group: anyio.abc.TaskGroup | None = None
        # Handlers, notification tasks and the reader run here, apart from the code inside
        # ``async with session``: the peer going away stops them, never the caller's block.
        self._workers_group: anyio.abc.TaskGroup | None = None
        self._workers: Workers | None = None
        self._notifications: NotificationQueue | None = None
        self._inline = False
        # ``closed`` (Sender's): no more traffic; ``_ended``: and nothing of the session runs
        # any more (``_finished`` is set then, if someone waits).
        self._ended = False
        self._finished: anyio.Event | None = None
        # A send failed for want of a peer, or the input broke: answers have nowhere to go.
        self._peer_gone = False
        # Where the handlers of a session with tasks run (copied for each): see __aenter__.
        self._context: contextvars.Context | None = None
        self._ready = False
        self._ready_event: anyio.Event | None = None
        # The lowest level of log messages the peer wants (``logging/setLevel``).
        self.log_level: types.LoggingLevel = "debug"
        # The lifespan of the server that made the session, if it has one (ctx.lifespan_state).
        self.lifespan: Lifespan | None = None
        # The server's rules for multi round-trip requests (its request state key...); None:
        # the defaults, with this process's random key.
        self.rounds_policy: RoundsPolicy | None = None
        # Whether the session runs a stateless multi round-trip request's handler in rounds
        # (:func:`serve_in_rounds`); a proxy's handlers answer such requests themselves.
        self.serves_rounds = True
        # Called with the session when the peer closed its side (the end of input) and the
        # handlers still running may finish: a server ends its listen streams then.
        self.on_input_end: Callable[[Session], None] | None = None
        # What makes the cancel scopes of its handlers, where whoever made the session learnt it
        # already (a Streamable HTTP app serving a stateless request on a session of its own:
        # learnt once per run, not once per request); None: learnt at the first.
        self.scope_maker: fastpath.ScopeMaker | None = None

    # -- state ----------------------------------------------------------------------------

    def new_cancel_scope(self, deadline: float = math.inf) -> anyio.CancelScope:
        make = self.scope_maker
        if make is not None:
            return make(deadline=deadline)
        return Sender.new_cancel_scope(self, deadline)

    @property
    def ready(self) -> anyio.Event:
        """Set once the handshake is complete (made when first asked for)."""
        event = self._ready_event
        if event is None:
            event = self._ready_event = anyio.Event()
            if self._ready:
                event.set()
        return event

    @property
    def is_ready(self) -> bool:
        """Whether the handshake is complete, without making :attr:`ready`'s event."""
        return self._ready or (self._ready_event is not None and self._ready_event.is_set())

    def _set_ready(self) -> None:
        self._ready = True
        if self._ready_event is not None:
            self._ready_event.set()

    async def wait_closed(self) -> None:
        """Until the peer closes the connection (or this side does) and the requests it sent
        before are answered (see the end of input above); inline, until :meth:`end` was called
        and the last handler has returned."""
        if self._finished is None:
            self._finished = anyio.Event()
            if self._ended:
                self._finished.set()
        await self._finished.wait()

    def _finish(self) -> None:
        """Nothing of the session runs any more (whoever closed it failed the waiting requests)."""
        self.close_sending(McpError(CONNECTION_CLOSED, SESSION_CLOSED))
        self.use_tasks(None)
        self._ended = True
        if self._finished is not None:
            self._finished.set()

    # -- lifetime -------------------------------------------------------------------------

    async def __aenter__(self) -> Session:
        if self._inline:
            raise RuntimeError("this session is driven inline")
        self._context = contextvars.copy_context()
        self._task_group = anyio.create_task_group()
        await self._task_group.__aenter__()
        await self._task_group.start(self._serve)
        return self

    async def __aexit__(
        self, exc_type: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> bool | None:
        assert self._task_group is not None
        self._task_group.cancel_scope.cancel()
        try:
            return await self._task_group.__aexit__(exc_type, exc, tb)
        except BaseExceptionGroup as group:
            # The session's own tasks end quietly; what the block raised is the caller's error,
            # so it comes out as itself rather than inside a group.
            single = only_error(group)
            if single is None:
                raise
            raise single from single.__cause__  # keeps its own cause, drops the group
        finally:
            with anyio.CancelScope(shield=True):
                await self.transport.aclose()
            self._finish()

    # -- reading, with tasks of its own ----------------------------------------------------

    async def _serve(self, *, task_status: anyio.abc.TaskStatus[None] = anyio.TASK_STATUS_IGNORED) -> None:
        context = self._context
        assert context is not None
        input_done = self._input_done = anyio.Event()
        try:
            async with anyio.create_task_group() as grace:
                async with anyio.create_task_group() as workers:
                    self._workers_group = workers
                    self.use_tasks(workers.start_soon, timer=True)
                    self._workers = Workers(
                        self,
                        workers,
                        context,
                        self._handlers,
                        self.max_concurrent_requests,
                        input_done,
                        refuse=self._refusal,
                        act=self._on,
                        run=self._run_handler,
                        drop=self._drop,
                        end_of_input=self._end_of_input,
                    )
                    self._workers.start()
                    task_status.started()
                    await input_done.wait()
                    if self._peer_gone:
                        # Handlers still running have nobody to answer any more.
                        workers.cancel_scope.cancel()
                    else:
                        # The peer closed its side: what it sent before is still answered.
                        self._wind_down()
                        grace.start_soon(self._expire, workers.cancel_scope)
                grace.cancel_scope.cancel()  # everything ended in time
        finally:
            if self._notifications is not None:
                self._notifications.close()
            self._finish()

    def _wind_down(self) -> None:
        """The input ended: the session's tasks end once their work is done (idle workers at
        once, the notification task when its queue is empty; the deadlines task ended with the
        input)."""
        assert self._workers is not None
        self._workers.wind_down()
        if self._notifications is not None:
            self._notifications.close()
        if self.on_input_end is not None:
            self.on_input_end(self)

    async def _expire(self, workers: anyio.CancelScope) -> None:
        """After ``shutdown_grace_period`` seconds from the end of input: the requests still
        being handled (or waiting for a place) are answered with an error, and cancelled."""
        await anyio.sleep(self.shutdown_grace_period)
        with anyio.CancelScope(shield=True):
            error = McpError(
                CONNECTION_CLOSED,
                f"{SESSION_CLOSED}: the request was still running "
                f"{self.shutdown_grace_period} s after the input ended",
            )
            answers = [
                (ident, data)
                for ident in list(self._handlers)
                if (data := self.connection.respond_error(ident, error)) is not None
            ]
            workers.cancel()
            with anyio.move_on_after(1.0):  # a peer that does not read gets no more time
                for ident, data in answers:
                    await self.send(data, ident, True)

    def on_peer_lost(self) -> None:
        """A send found no peer: after the end of input, stop waiting for handlers at once."""
        self._peer_gone = True
        if self._input_done is not None and self._input_done.is_set() and self._workers_group is not None:
            self._workers_group.cancel_scope.cancel()

    def _end_of_input(self, peer_gone: bool) -> None:
        # Nothing more comes in, answers included: requests sent fail, no new one is sent.
        if peer_gone:
            self._peer_gone = True  # not a peer that is done sending: one gone, or us
        self.close_sending(McpError(CONNECTION_CLOSED, SESSION_CLOSED))
        if self._input_done is not None:
            self._input_done.set()

    # -- acting on what is received ----------------------------------------------------------

    async def _on(self, event: Event) -> None:
        if isinstance(event, Reply):
            await self.send(event.data, event.id, event.id is not None)
        elif isinstance(event, ResponseReceived):
            self.on_response(event)
        elif isinstance(event, ErrorReceived):
            self.on_error(event)
        elif isinstance(event, NotificationReceived):
            handler = self.notification_handlers.get(event.method)
            if handler is not None:
                # One task runs notification handlers in the order they arrived (see
                # mcpbind.runtime.notification_queue), made at the first.
                queue = self._notifications
                if queue is None:
                    assert self._workers_group is not None and self._context is not None
                    queue = self._notifications = NotificationQueue(self.max_pending_requests)
                    self._workers_group.start_soon(queue.run, self._notify_handler, self._context)
                await queue.put(handler, event)
        elif isinstance(event, CancelRequested):
            self.cancel_received(event.request_id)
        elif isinstance(event, ProgressReceived):
            await self.on_progress(event)
        elif isinstance(event, SessionReady):
            self._set_ready()
        elif isinstance(event, UnmatchedResponse):
            log.debug("dropping a response for unknown request id %r", event.id)

    async def notifications_handled(self, timeout: float = 5.0) -> None:
        """Wait until the handlers of every notification received so far have run (one task
        runs them, in the order they came, while responses wake their callers at once): what a
        caller must do before acting on a response that the peer sent after notifications it
        wants seen first. Returns at once where there is nothing queued, and after ``timeout``
        seconds if the session is ending meanwhile."""
        if self._notifications is not None:
            await self._notifications.handled(timeout)

    def is_handling(self, ident: RequestId) -> bool:
        """Whether the received request ``ident`` is being handled (not answered yet)."""
        return ident in self._handlers

    def cancel_received(self, ident: RequestId) -> bool:
        """Stop the handler of the received request ``ident``, which will send no response, as
        the peer's ``notifications/cancelled`` does (a transport calls it when the peer went
        away without one). False if no such request is being handled."""
        scope = self._handlers.get(ident)
        if scope is None:
            return False
        self.connection.abandon(ident)
        scope.cancel()
        return True

    def _refusal(self, event: RequestReceived) -> tuple[RequestHandler | None, bytes | None]:
        """The handler for a received request, or the error answer that refuses it."""
        handler = self.request_handlers.get(event.method)
        if handler is None:
            error = McpError(METHOD_NOT_FOUND, f"Method not found: {event.method}")
            return None, self.connection.respond_error(event.id, error)
        if len(self._handlers) >= self.max_pending_requests:
            error = McpError(
                INTERNAL_ERROR, f"Too many requests in progress (limit {self.max_pending_requests})"
            )
            return None, self.connection.respond_error(event.id, error)
        return handler, None

    async def _run_handler(
        self,
        handler: RequestHandler,
        event: RequestReceived,
        scope: anyio.CancelScope,
        context: contextvars.Context,
        on_suspend: Callable[[], None] | None = None,
    ) -> None:
        """Run a request's handler and send its answer. The caller is inside ``scope``, the one
        that cancels it (a cancellation comes out of here as the backend's exception).

        Every step of the handler runs in ``context``, the request's own (see
        :func:`~mcpbind.fastpath.first_step`); ``on_suspend`` is called just before the handler
        first waits for something, if it does (on the plain path: before it starts).
        """
        ident = event.id
        try:
            meta = params_meta(event.params)
            token = meta.get("progressToken") if isinstance(meta, dict) else None
            request_context = RequestContext(
                self, ident, event.method, token if isinstance(token, str | int) else None, event.envelope
            )
            if event.envelope is not None and event.method in MRTR_METHODS and self.serves_rounds:
                # A round of a multi round-trip request: asks without answers end it.
                handler = functools.partial(serve_in_rounds, handler, self.rounds_policy)
            try:
                run = context.run
                call = run(handler, event.params, request_context)
                if type(call) is not CoroutineType:
                    call = awaited(call)  # its steps too are taken by hand, in ``context``
                # Most handlers finish in this first step (taken by hand on the fast path).
                done, result = first_step(call, run)
                if not done:
                    if on_suspend is not None:
                        try:
                            on_suspend()
                        except BaseException:
                            run(call.close)  # not left suspended for the garbage collector
                            raise
                    result = await finish(call, result, run)
            except McpError as exc:
                data = self.connection.respond_error(ident, exc)
            except Exception as exc:
                log.exception("handler for %s failed", event.method)
                message = f"Internal error: {exc}" if self.expose_internal_errors else "Internal error"
                data = self.connection.respond_error(ident, McpError(INTERNAL_ERROR, message))
            else:
                try:
                    data = self.connection.respond(ident, self.connection.spec_of(event.method), result)
                except (msgspec.EncodeError, msgspec.DecodeError, TypeError, RecursionError) as exc:
                    log.error("handler for %s returned a value that cannot be sent: %s", event.method, exc)
                    data = self.connection.respond_error(ident, McpError(INTERNAL_ERROR, "Internal error"))
        finally:
            # Answered (or failed): too late to cancel it, and the peer may reuse its id now.
            self._drop(ident, scope)
        if data is not None:  # None: cancelled by the peer meanwhile (abandoned)
            try:
                related_sender = self.related_sender
                if related_sender is not None:
                    await related_sender.send_related(data, ident, True)
                else:
                    await self.transport.send(data)
            except (anyio.BrokenResourceError, anyio.ClosedResourceError):
                log.debug("peer gone; the answer to %r not sent", ident)
                self.on_peer_lost()

    def _drop(self, ident: RequestId, scope: anyio.CancelScope) -> None:
        # The peer may already have reused the id of a cancelled request: only our entry goes.
        if self._handlers.get(ident) is scope:
            del self._handlers[ident]
            if self._inline and self.closed and not self._handlers:
                self._finish()  # the last handler of an ended session

    async def _notify_handler(
        self, handler: NotificationHandler, event: NotificationReceived, context: contextvars.Context
    ) -> None:
        try:
            await run_in(context, handler, event.params, RequestContext(self, None, event.method, None))
        except Exception:
            log.exception("notification handler for %s failed", event.method)

    # -- driving inline -------------------------------------------------------------------

    def start_inline(self, spawn: Spawn | None = None) -> None:
        """Drive this session with :meth:`feed` and :meth:`end` instead of ``async with``.

        ``spawn(fn, *args)`` starts ``fn(*args)`` in a task that outlives the caller (a task
        group's ``start_soon``); :meth:`send_soon` needs it, and drops what it is given without.
        """
        if self._task_group is not None or self._inline:
            raise RuntimeError("this session is running already")
        self._inline = True
        self.use_tasks(spawn)

    async def feed(self, data: bytes, on_suspend: Callable[[], None] | None = None) -> None:
        """Act on one message received from the peer, in the calling task (inline only).

        A request's handler runs here, and its response is sent from here through the
        transport; a notification's handler too; a response wakes the request waiting for it.
        ``on_suspend`` is called (once at most) just before a handler first waits for
        something: a caller that must watch for something meanwhile (the peer going away)
        starts doing so then, and a handler that finishes at once costs it nothing (on the
        plain path of :mod:`mcpbind.fastpath`, every handler counts as one that waits). Each
        handler runs in a copy of the calling task's context: what it sets stays its own.

        Raises ``anyio.ClosedResourceError`` once :meth:`end` was called.
        """
        if self.closed:
            raise anyio.ClosedResourceError
        try:
            events = self.connection.receive(data)
        except Exception:  # a bug, not bad input: the core answers bad input itself
            log.exception("could not process a received message; the session goes on")
            return
        for event in events:
            if isinstance(event, RequestReceived):
                await self._handle(event, on_suspend)
                on_suspend = None
            elif isinstance(event, NotificationReceived):
                handler = self.notification_handlers.get(event.method)
                if handler is not None:
                    await self._notify_handler(handler, event, contextvars.copy_context())
            else:
                await self._on(event)

    async def _handle(self, event: RequestReceived, on_suspend: Callable[[], None] | None) -> None:
        handler, refusal = self._refusal(event)
        if handler is None:
            if refusal is not None:
                await self.send(refusal, event.id, True)
            return
        scope = self.new_cancel_scope()
        self._handlers[event.id] = scope
        turns = self._turns
        if turns is None:
            turns = self._turns = fastpath.new_semaphore(self.max_concurrent_requests)
        try:
            turns.acquire_nowait()
        except anyio.WouldBlock:
            # Wait until a running handler hands over its place (``max_concurrent_requests``).
            if on_suspend is not None:
                on_suspend()
                on_suspend = None
            turn = False
            try:
                with scope:
                    await turns.acquire()
                    turn = True
            except BaseException:
                self._drop(event.id, scope)
                raise
            if not turn or scope.cancel_called:  # cancelled while waiting, or as its turn came
                if turn:
                    turns.release()
                self._drop(event.id, scope)
                return
            scope = self._handlers[event.id] = self.new_cancel_scope()
        try:
            with scope:
                await self._run_handler(handler, event, scope, contextvars.copy_context(), on_suspend)
        finally:
            turns.release()

    async def end(self) -> None:
        """End an inline session: its running handlers are cancelled (they send nothing more),
        requests it sent fail with ``CONNECTION_CLOSED``, the transport is closed. The
        handlers may still be unwinding on return: :meth:`wait_closed` waits for them."""
        if not self._inline:
            raise RuntimeError("only an inline session is ended with end()")
        if self.closed:
            return
        self.close_sending(McpError(CONNECTION_CLOSED, SESSION_CLOSED))
        self.use_tasks(None)
        for scope in self._handlers.values():
            scope.cancel()
        with anyio.CancelScope(shield=True):
            await self.transport.aclose()
        if not self._handlers:
            self._finish()
