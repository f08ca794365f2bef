"""The session driver: the only place that knows about tasks, cancel scopes and timeouts.

It feeds received messages to the :class:`~mcpbind.protocol.connection.Connection` and acts on the
events: each request's handler run (bounded) and answered, responses to the callers waiting on
them, cancellations into the handlers' cancel scopes, progress to the callers' callbacks.
Messages come either from the transport's ``receive()``, read by the session's own tasks (the
task that reads runs what it reads, handing reading over only when a handler waits), or from
whoever receives them, who hands each to :meth:`Session.feed` (inline: no task of the
session's own). anyio only, so the same code runs on asyncio and on trio.
"""

from __future__ import annotations

import contextvars
import logging
import math
import sys
import time
from collections import deque
from collections.abc import Awaitable, Callable, Mapping
from types import CoroutineType, TracebackType
from typing import Any, TypeVar

import anyio
import anyio.abc
import msgspec
from anyio.streams.memory import MemoryObjectSendStream
from msgspec import UNSET

from mcpbind import fastpath
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
from mcpbind.protocol.errors import (
    CONNECTION_CLOSED,
    INTERNAL_ERROR,
    INVALID_REQUEST,
    METHOD_NOT_FOUND,
    REQUEST_TIMEOUT,
    McpError,
)
from mcpbind.protocol.methods import NotificationSpec, RequestSpec
from mcpbind.protocol.wire import Codec, RequestId
from mcpbind.runtime.context import LOG_LEVELS as LOG_LEVELS
from mcpbind.runtime.context import ClientContext, RequestContext, ServerContext, require_logging, sends_logs
from mcpbind.runtime.deadlines import Deadlines, Waiter
from mcpbind.runtime.exception_groups import only_error
from mcpbind.runtime.handlers import HANDLED_BY_SESSION, HandlerRegistry, NotificationHandler, RequestHandler
from mcpbind.schema import v2025_11_25 as types
from mcpbind.transports.base import MessageTooLarge, Transport

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
methods = types.methods

P = TypeVar("P")
R = TypeVar("R")

ProgressCallback = Callable[[float, float | None, str | None], Awaitable[None]]
# Starts ``fn(*args)`` in a task of its own (a task group's ``start_soon``).
Spawn = Callable[..., object]


async def _call_progress(
    callback: ProgressCallback, progress: float, total: float | None, message: str | None
) -> None:
    try:
        await callback(progress, total, message)
    except Exception:
        log.exception("progress callback failed")


class _Lead:
    """A worker's time as the leader: ``leading`` until a handler it runs waits for something
    (then reading is handed over); ``running`` while that handler runs."""

    __slots__ = ("leading", "running", "session")

    def __init__(self, session: Session) -> None:
        self.session = session
        self.leading = True
        self.running = False

    def hand_over(self) -> None:
        self.leading = False
        self.session._hand_over()

    def handed_over(self) -> bool:
        return not self.leading

    def cut_short(self) -> bool:
        """Whether the handler running was cancelled (the scope came out in the middle)."""
        return self.running


# A request given a place to run: its handler, itself, and the scope it waited in (if it did).
_Job = tuple[RequestHandler, RequestReceived, "anyio.CancelScope | None"]


async def _run_in(context: contextvars.Context, function: Callable[..., Awaitable[R]], *args: Any) -> R:
    """Await ``function(*args)`` with every step of it run in ``context`` (see
    :func:`~mcpbind.fastpath.first_step`)."""
    run = context.run
    call = run(function, *args)
    if type(call) is not CoroutineType:
        call = awaited(call)
    done, value = first_step(call, run)
    if done:
        result: R = value
        return result
    return await finish(call, value, run)


_SESSION_CLOSED = "Connection closed"


class Session:
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
        "_active",
        "_closed",
        "_context",
        "_deadlines",
        "_ended",
        "_event_type",
        "_finished",
        "_handlers",
        "_idle_workers",
        "_inbox",
        "_inline",
        "_input_done",
        "_notifications",
        "_outbox",
        "_outbox_dropped",
        "_outbox_size",
        "_peer_gone",
        "_progress",
        "_ready",
        "_ready_event",
        "_scope_type",
        "_spawn",
        "_task_group",
        "_turns",
        "_waiters",
        "_waiting",
        "_workers",
        "connection",
        "expose_internal_errors",
        "log_level",
        "max_concurrent_requests",
        "max_pending_requests",
        "max_queued_bytes",
        "notification_handlers",
        "request_handlers",
        "request_timeout",
        "shutdown_grace_period",
        "transport",
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
        self.transport = transport
        self.connection = connection
        # Shared with the Server or Client that made the session: a copy per session would
        # cost more memory than all the rest of an idle HTTP session.
        self.request_handlers: Mapping[str, RequestHandler] = (
            request_handlers if request_handlers is not None else {}
        )
        self.notification_handlers: Mapping[str, NotificationHandler] = (
            notification_handlers if notification_handlers is not None else {}
        )
        self.request_timeout = request_timeout
        self.max_pending_requests = max_pending_requests
        self.expose_internal_errors = expose_internal_errors
        self.shutdown_grace_period = shutdown_grace_period
        self.max_queued_bytes = max_queued_bytes
        # Messages of send_soon waiting for the task that sends them (None: no such task).
        self._outbox: deque[bytes] | None = None
        self._outbox_size = 0
        self._outbox_dropped = 0
        # With tasks of its own, the session runs a pool of worker tasks (leader and followers):
        # the one that reads (the leader) also runs the handler of each request it reads, in
        # line, and goes on reading when it returns without having waited for anything. A
        # handler that waits makes its task hand reading over (to an idle worker, or a new one,
        # up to ``max_concurrent_requests`` + 1 of them, kept for the session's life) before it
        # waits: a quick request costs no task switch, no queue, no new task. Each handler
        # runs in a copy of ``_context`` (stepped by hand, see ``resume``), never in the
        # worker's own context, which stays as the session's start left it.
        # With tasks of its own, ``_active`` handlers run; past ``max_concurrent_requests``,
        # requests wait in ``_waiting``. Inline, callers wait for a place in ``_turns``.
        self.max_concurrent_requests = max_concurrent_requests
        self._active = 0
        self._turns: fastpath.Semaphore | None = None  # (inline: made at the first request)
        # (Made by ``_serve``: an empty deque costs about 600 bytes, which inline sessions save.)
        self._waiting: deque[_Job]
        self._inbox: deque[Event]  # the rest of a batch, for whoever reads next
        self._idle_workers: fastpath.Parking
        self._input_done: anyio.Event | None = None
        # Streams, events and task groups are made when first needed: an idle inline session
        # has none (an asyncio Event alone costs more than a kilobyte).
        self._waiters: dict[RequestId, Waiter[Any]] = {}
        self._progress: dict[str | int, Waiter[Any]] | None = None
        self._handlers: dict[RequestId, anyio.CancelScope] = {}
        self._task_group: anyio.abc.TaskGroup | None = None
        # Handlers, notification tasks and the reader run here, apart from the code inside
        # ``async with session``: the peer going away stops them, never the caller's block.
        self._workers: anyio.abc.TaskGroup | None = None
        self._notifications: (
            MemoryObjectSendStream[tuple[NotificationHandler, NotificationReceived]] | None
        ) = None
        self._inline = False
        self._spawn: Spawn | None = None
        # What makes cancel scopes and events (see fastpath.scope_maker): learnt at the first.
        self._scope_type: fastpath.ScopeMaker | None = None
        self._event_type: fastpath.EventMaker | None = None
        self._deadlines: Deadlines | None = None
        # ``_closed``: no more traffic; ``_ended``: and nothing of the session runs any more
        # (``_finished`` is set then, if someone waits).
        self._closed = False
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

    # -- state ----------------------------------------------------------------------------

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

    @property
    def closed(self) -> bool:
        return self._closed

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
        self._closed = True
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
            self._fail_waiters(McpError(CONNECTION_CLOSED, _SESSION_CLOSED))
            self._finish()

    # -- reading --------------------------------------------------------------------------

    async def _serve(self, *, task_status: anyio.abc.TaskStatus[None] = anyio.TASK_STATUS_IGNORED) -> None:
        self._input_done = anyio.Event()
        self._waiting = deque()
        self._inbox = deque()
        self._idle_workers = fastpath.new_parking()
        try:
            async with anyio.create_task_group() as grace:
                async with anyio.create_task_group() as workers:
                    self._workers = workers
                    workers.start_soon(self._work, name="mcpbind session worker")
                    task_status.started()
                    await self._input_done.wait()
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
            self._fail_waiters(McpError(CONNECTION_CLOSED, _SESSION_CLOSED))
            self._finish()

    def _wind_down(self) -> None:
        """The input ended: the session's tasks end once their work is done (idle workers at
        once, the notification task when its queue is empty, the deadlines task now)."""
        self._idle_workers.wake_all()
        if self._notifications is not None:
            self._notifications.close()
        if self._deadlines is not None:
            self._deadlines.stop()

    async def _expire(self, workers: anyio.CancelScope) -> None:
        """After ``shutdown_grace_period`` seconds from the end of input: the requests still
        being handled (or waiting for a place) are answered with an error, and cancelled."""
        await anyio.sleep(self.shutdown_grace_period)
        with anyio.CancelScope(shield=True):
            error = McpError(
                CONNECTION_CLOSED,
                f"{_SESSION_CLOSED}: the request was still running "
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

    def _lost_peer(self) -> None:
        """A send found no peer: after the end of input, stop waiting for handlers at once."""
        self._peer_gone = True
        if self._input_done is not None and self._input_done.is_set() and self._workers is not None:
            self._workers.cancel_scope.cancel()

    async def _work(self) -> None:
        """A worker: lead (read, and run what is read) until it hands reading over, then wait
        until it is given reading back. Ends with the input."""
        assert self._input_done is not None
        while not self._input_done.is_set():
            await self._lead()
            if self._input_done.is_set() or not await self._idle_workers.park():
                return  # (plain path: a worker is not kept, see fastpath.Parking)

    def _hand_over(self) -> None:
        """The leader's handler is about to wait: another worker reads meanwhile."""
        if not self._idle_workers.wake_one():
            assert self._workers is not None
            self._workers.start_soon(self._work, name="mcpbind session worker")

    async def _lead(self) -> None:
        """Read messages and act on them in this task, a request's handler included, until a
        handler waits for something: reading is handed over then, and this returns once the
        handler (and requests that were waiting for its place) are done. Returns at the end of
        input too.

        One cancel scope serves every handler run while leading: until a handler waits, none
        can be cancelled (the peer's cancellation is read by this very task), and once one
        waits, this task runs nothing else until it is done, so cancelling the scope cancels
        exactly that handler. (A cancel scope per request would cost more than the rest.)
        """
        context = self._context
        assert context is not None
        while True:
            lead = _Lead(self)
            job: _Job | None = None
            scope = self._new_scope()
            with scope:
                while not lead.handed_over():
                    job = await self._read_request()
                    if job is None:
                        return  # the end of input
                    while job is not None:
                        handler, event, _ = job
                        self._handlers[event.id] = scope
                        lead.running = True
                        await self._run_handler(handler, event, scope, context.copy(), lead.hand_over)
                        lead.running = False
                        job = self._next_job()  # its place goes on, or is freed
                        if lead.handed_over():
                            break
            if lead.cut_short():  # its handler was cancelled: its place goes on, or is freed
                job = self._next_job()
            if not lead.handed_over():
                continue  # (a handler cancelled its own request): lead on
            # Reading is another task's now: run what waited for a place, then stop.
            while job is not None:
                handler, event, own = job
                assert own is not None
                with own:
                    await self._run_handler(handler, event, own, context.copy())
                job = self._next_job()
            return

    async def _read_request(self) -> _Job | None:
        """Read and act on messages until a request may run now (its place is taken), or
        ``None`` at the end of input. Requests are refused (answered here) past
        ``max_pending_requests`` and wait past ``max_concurrent_requests``."""
        inbox = self._inbox
        while True:
            if inbox:
                event = inbox.popleft()
            else:
                try:
                    data = await self.transport.receive()
                except MessageTooLarge as exc:
                    await self.send(Codec.encode_error(None, INVALID_REQUEST, f"Invalid request: {exc}"))
                    continue
                except anyio.EndOfStream:
                    self._end_of_input()
                    return None
                except (anyio.ClosedResourceError, anyio.BrokenResourceError):
                    self._peer_gone = True  # not a peer that is done sending: one gone, or us
                    self._end_of_input()
                    return None
                try:
                    events = self.connection.receive(data)
                except Exception:  # a bug, not bad input: the core answers bad input itself
                    log.exception("could not process a received message; the session goes on")
                    continue
                if len(events) != 1:
                    inbox.extend(events)  # a batch, or nothing
                    continue
                event = events[0]
            if not isinstance(event, RequestReceived):
                await self._on(event)
                continue
            handler, refusal = self._refusal(event)
            if handler is None:
                if refusal is not None:
                    await self.send(refusal, event.id, True)
                continue
            if self._active < self.max_concurrent_requests:
                self._active += 1
                return handler, event, None
            # It waits for a place, cancellable meanwhile.
            scope = self._new_scope()
            self._handlers[event.id] = scope
            self._waiting.append((handler, event, scope))

    def _next_job(self) -> _Job | None:
        """A handler finished: its place goes to the first request waiting for one, if any."""
        waiting = self._waiting
        while waiting:
            job = waiting.popleft()
            scope = job[2]
            assert scope is not None
            if not scope.cancel_called:
                return job
            self._drop(job[1].id, scope)  # cancelled while it waited
        self._active -= 1
        return None

    def _new_event(self) -> anyio.Event:
        make = self._event_type
        if make is None:
            event = anyio.Event()
            self._event_type = fastpath.event_maker(event)
            return event
        return make()

    def _new_scope(self, deadline: float = math.inf) -> anyio.CancelScope:
        make = self._scope_type
        if make is None:
            scope = anyio.CancelScope(deadline=deadline)
            self._scope_type = fastpath.scope_maker(scope)
            return scope
        return make(deadline=deadline)

    def _end_of_input(self) -> None:
        # Nothing more comes in, answers included: requests sent fail, no new one is sent.
        self._closed = True
        self._fail_waiters(McpError(CONNECTION_CLOSED, _SESSION_CLOSED))
        if self._input_done is not None:
            self._input_done.set()

    async def _on(self, event: Event) -> None:
        if isinstance(event, Reply):
            await self.send(event.data, event.id, event.id is not None)
        elif isinstance(event, ResponseReceived):
            waiter = self._waiters.get(event.id)
            if waiter is not None:
                waiter.result = event.result
                waiter.event.set()
        elif isinstance(event, ErrorReceived):
            waiter = self._waiters.get(event.id)
            if waiter is not None:
                waiter.error = event.error
                waiter.event.set()
        elif isinstance(event, NotificationReceived):
            handler = self.notification_handlers.get(event.method)
            if handler is not None:
                # One task runs notification handlers in the order they arrived; the reader
                # goes on unless that many are waiting (then it waits: backpressure).
                if self._notifications is None:
                    assert self._workers is not None
                    send, receive = anyio.create_memory_object_stream[
                        tuple[NotificationHandler, NotificationReceived]
                    ](self.max_pending_requests)
                    self._notifications = send
                    self._workers.start_soon(self._dispatch_notifications, receive)
                await self._notifications.send((handler, event))
        elif isinstance(event, CancelRequested):
            self.cancel_received(event.request_id)
        elif isinstance(event, ProgressReceived):
            waiter = self._progress.get(event.token) if self._progress is not None else None
            if waiter is not None and waiter.progress is not None:
                p = event.params
                total = p.total if isinstance(p.total, float | int) else None
                message = p.message if isinstance(p.message, str) else None
                # In line, so that callbacks see progress in the order it was sent: keep them quick.
                await _call_progress(waiter.progress, p.progress, total, message)
        elif isinstance(event, SessionReady):
            self._set_ready()
        elif isinstance(event, UnmatchedResponse):
            log.debug("dropping a response for unknown request id %r", event.id)

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

    def send_soon(self, data: bytes) -> bool:
        """Send an encoded message related to no request (a notification to every session, a
        log record) without waiting for anything; for code running in the event loop,
        synchronous or not. The transport takes it now if it can without waiting (its
        ``send_nowait``: True is returned); else a task of the session sends it, after the
        messages given before (answers sent meanwhile may overtake it), and the caller goes
        on. At most ``max_queued_bytes`` of
        messages wait so (or a single larger one): past that the oldest waiting are dropped,
        with a warning, so that a peer that does not read holds back no sender and makes the
        session buffer no more. Dropped at once when the session has no task to send from
        (an inline session without ``spawn``, or a session that ended)."""
        outbox = self._outbox
        if outbox is None:
            send_nowait = getattr(self.transport, "send_nowait", None)
            if send_nowait is not None and send_nowait(data):
                return True
            if self._inline:
                spawn = self._spawn if not self._closed else None
            else:
                spawn = self._workers.start_soon if self._workers is not None and not self._ended else None
            if spawn is None:
                log.debug("no task to send %d bytes from: dropped", len(data))
                return False
            outbox = self._outbox = deque()
            spawn(self._send_queued, outbox)
        outbox.append(data)
        self._outbox_size += len(data)
        if self._outbox_size > self.max_queued_bytes and len(outbox) > 1:
            first = not self._outbox_dropped
            while self._outbox_size > self.max_queued_bytes and len(outbox) > 1:
                self._outbox_size -= len(outbox.popleft())
                self._outbox_dropped += 1
            if first:  # (the total is logged once they are sent, or the session ends)
                log.warning(
                    "the peer is not reading: dropping the oldest messages queued for it "
                    "(more than max_queued_bytes, %d bytes, are waiting)",
                    self.max_queued_bytes,
                )
        return False

    async def deliver(self, data: bytes) -> bool:
        """Send an encoded message related to no request (what a server tells every session)
        without waiting for the peer: in line if the transport never waits for its peer for
        such a message (``unrelated_send_waits_for_peer = False``, see
        :class:`~mcpbind.transports.base.Transport`) and nothing queued is ahead of it, else as
        :meth:`send_soon`. False if it was queued (then the caller lets the session's task
        run before it sends more)."""
        if self._outbox is None and not getattr(self.transport, "unrelated_send_waits_for_peer", True):
            await self.send(data)
            return True
        return self.send_soon(data)

    async def _send_queued(self, outbox: deque[bytes]) -> None:
        """Send what :meth:`send_soon` queued, in order, until none is left."""
        try:
            while outbox and not (self._closed if self._inline else self._ended):
                data = outbox.popleft()
                self._outbox_size -= len(data)
                await self.send(data)
        finally:
            if self._outbox is outbox:
                self._outbox = None
                self._outbox_size = 0
                if self._outbox_dropped:
                    log.info("%d messages queued for the peer were dropped in all", self._outbox_dropped)
                    self._outbox_dropped = 0

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
            meta = getattr(event.params, "meta", UNSET)
            token = meta.get("progressToken") if isinstance(meta, dict) else None
            request_context = RequestContext(
                self, ident, event.method, token if isinstance(token, str | int) else None
            )
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
                except (msgspec.EncodeError, msgspec.ValidationError, TypeError, RecursionError) as exc:
                    log.error("handler for %s returned a value that cannot be sent: %s", event.method, exc)
                    data = self.connection.respond_error(ident, McpError(INTERNAL_ERROR, "Internal error"))
        finally:
            # Answered (or failed): too late to cancel it, and the peer may reuse its id now.
            self._drop(ident, scope)
        if data is not None:  # None: cancelled by the peer meanwhile (abandoned)
            try:
                await self.transport.send(data, ident, True)
            except (anyio.BrokenResourceError, anyio.ClosedResourceError):
                log.debug("peer gone; the answer to %r not sent", ident)
                self._lost_peer()

    def _drop(self, ident: RequestId, scope: anyio.CancelScope) -> None:
        # The peer may already have reused the id of a cancelled request: only our entry goes.
        if self._handlers.get(ident) is scope:
            del self._handlers[ident]
            if self._inline and self._closed and not self._handlers:
                self._finish()  # the last handler of an ended session

    async def _dispatch_notifications(
        self, queue: anyio.abc.ObjectReceiveStream[tuple[NotificationHandler, NotificationReceived]]
    ) -> None:
        context = self._context
        assert context is not None
        async with queue:
            async for handler, event in queue:
                await self._notify_handler(handler, event, context.copy())

    async def _notify_handler(
        self, handler: NotificationHandler, event: NotificationReceived, context: contextvars.Context
    ) -> None:
        try:
            await _run_in(context, handler, event.params, RequestContext(self, None, event.method, None))
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
        self._spawn = spawn

    async def feed(self, data: bytes, on_suspend: Callable[[], None] | None = None) -> None:
        """Act on one message received from the peer, in the calling task (inline only).

        A request's handler runs here, and its response is sent from here through the
        transport; a notification's handler too; a response wakes the request waiting for it.
        ``on_suspend`` is called (once at most) just before a handler first waits for
        something: a caller that must watch for something meanwhile (the peer going away)
        starts doing so then, and a handler that finishes at once costs it nothing. Each handler
        runs in a copy of the calling task's context: what it sets stays its own.

        Raises ``anyio.ClosedResourceError`` once :meth:`end` was called.
        """
        if self._closed:
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
        scope = self._new_scope()
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
            scope = self._handlers[event.id] = self._new_scope()
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
        if self._closed:
            return
        self._closed = True
        for scope in self._handlers.values():
            scope.cancel()
        self._fail_waiters(McpError(CONNECTION_CLOSED, _SESSION_CLOSED))
        with anyio.CancelScope(shield=True):
            await self.transport.aclose()
        if not self._handlers:
            self._finish()

    # -- sending --------------------------------------------------------------------------

    async def send(self, data: bytes, related: RequestId | None = None, final: bool = False) -> None:
        """Write an encoded message to the transport (``related`` and ``final`` as for
        :meth:`~mcpbind.transports.base.Transport.send`). A peer that is gone is not an error here:
        the message is dropped (logged at debug level) and the session notes the peer lost."""
        try:
            await self.transport.send(data, related, final)
        except (anyio.BrokenResourceError, anyio.ClosedResourceError):
            log.debug("peer gone; %d bytes not sent", len(data))
            self._lost_peer()

    async def request(
        self,
        spec: RequestSpec[P, R, Any],
        params: P,
        *,
        timeout: float | None = None,
        progress: ProgressCallback | None = None,
        related: RequestId | None = None,
    ) -> R:
        """Send a request and wait for its result; raises :class:`McpError` for an error
        response, a timeout (``REQUEST_TIMEOUT``) or a closed connection. Cancelling the caller
        sends ``notifications/cancelled`` to the peer."""
        if self._closed:
            raise McpError(CONNECTION_CLOSED, _SESSION_CLOSED)
        waiter: Waiter[R] = Waiter(progress, self._new_event())
        ident, data = self.connection.start_request(
            spec, params, progress=progress is not None, related=related is not None
        )
        if progress is not None:
            if self._progress is None:
                self._progress = {}
            self._progress[ident] = waiter
        self._waiters[ident] = waiter
        limit = self.request_timeout if timeout is None else timeout
        try:
            send_nowait = getattr(self.transport, "send_nowait", None)
            if self._workers is not None and send_nowait is not None and send_nowait(data):
                # Sent already: only the wait remains, and the deadlines task times it.
                if limit is not None:
                    deadlines = self._deadlines
                    if deadlines is None:
                        deadlines = self._deadlines = Deadlines()
                        self._workers.start_soon(
                            deadlines.run, self._new_event, name="mcpbind request deadlines"
                        )
                    deadlines.add(time.monotonic() + limit, waiter, len(self._waiters))
                await waiter.event.wait()
            else:
                # The send may wait too: one scope with the deadline covers both.
                scope = self._new_scope(math.inf if limit is None else anyio.current_time() + limit)
                with scope:
                    await self.transport.send(data, related)
                    await waiter.event.wait()
                waiter.timed_out = scope.cancelled_caught
            if waiter.timed_out:
                await self._cancel_remote(ident, "timed out")
                raise McpError(REQUEST_TIMEOUT, f"Request {spec.method} timed out after {limit} s")
        except anyio.get_cancelled_exc_class():
            await self._cancel_remote(ident, "cancelled by the caller")
            raise
        except (anyio.BrokenResourceError, anyio.ClosedResourceError):
            raise McpError(CONNECTION_CLOSED, _SESSION_CLOSED) from None
        finally:
            waiter.finished = True
            self._waiters.pop(ident, None)
            if self._progress is not None:
                self._progress.pop(ident, None)
            self.connection.forget(ident)
        if waiter.error is not None:
            raise waiter.error
        return waiter.result  # type: ignore[return-value]

    async def _cancel_remote(self, ident: RequestId, reason: str) -> None:
        data = self.connection.cancel(ident, reason)
        if data is not None:
            with anyio.CancelScope(shield=True), anyio.move_on_after(1.0):
                await self.send(data)

    async def notify(
        self, spec: NotificationSpec[P, Any], params: P, *, related: RequestId | None = None
    ) -> None:
        await self.send(self.connection.notification(spec, params), related)

    def _fail_waiters(self, error: McpError) -> None:
        for waiter in self._waiters.values():
            if not waiter.event.is_set():
                waiter.error = error
                waiter.event.set()
