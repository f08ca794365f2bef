"""The sending side of a session: messages out to the peer, and the requests this side sent,
waiting for their answers (:class:`Sender`). :class:`~mcpbind.runtime.session.Session` extends it
with the receiving side and the tasks that drive both."""

from __future__ import annotations

import logging
import math
import time
from collections import deque
from collections.abc import Callable
from typing import Any, TypeVar

import anyio

from mcpbind import fastpath
from mcpbind.protocol.connection import Connection, ErrorReceived, ProgressReceived, ResponseReceived
from mcpbind.protocol.errors import CONNECTION_CLOSED, REQUEST_TIMEOUT, McpError
from mcpbind.protocol.jsonrpc import RequestId
from mcpbind.protocol.methods import NotificationSpec, RequestSpec
from mcpbind.runtime.batching import request_batcher
from mcpbind.runtime.deadlines import Deadlines, ProgressCallback, Waiter
from mcpbind.transports.base import RelatedSender, Transport, features, nowait_sender, related_sender

__all__ = ["SESSION_CLOSED", "ProgressCallback", "Sender", "Spawn"]

log = logging.getLogger("mcpbind")

P = TypeVar("P")
R = TypeVar("R")

# Starts ``fn(*args)`` in a task of its own (a task group's ``start_soon``).
Spawn = Callable[..., object]

SESSION_CLOSED = "Connection closed"


async def _call_progress(
    callback: ProgressCallback, progress: float, total: float | None, message: str | None
) -> None:
    try:
        await callback(progress, total, message)
    except Exception:
        log.exception("progress callback failed")


class Sender:
    """What a session sends: encoded messages through the transport (:meth:`send`, and without
    waiting, :meth:`send_soon` and :meth:`deliver`), requests whose callers wait for the answer
    (:meth:`request`, with its timeout, progress and cancellation) and notifications.

    ``related_sender`` is the transport if it wants to know which received request a message
    belongs to (a :class:`~mcpbind.transports.base.RelatedSender`), else None.

    The session driving it tells it where tasks of its own may start (:meth:`use_tasks`), hands
    it the answers it receives (:meth:`on_response`, :meth:`on_error`, :meth:`on_progress`),
    closes it (:meth:`close_sending`), and learns of a peer gone (:meth:`on_peer_lost`).
    """

    __slots__ = (
        "_batcher",
        "_closed",
        "_deadlines",
        "_event_type",
        "_flag_type",
        "_nowait",
        "_outbox",
        "_outbox_dropped",
        "_outbox_size",
        "_progress",
        "_scope_type",
        "_spawn",
        "_timer_spawn",
        "_unrelated_send_waits",
        "_waiters",
        "connection",
        "max_queued_bytes",
        "related_sender",
        "request_timeout",
        "transport",
    )

    def __init__(
        self,
        transport: Transport,
        connection: Connection,
        *,
        request_timeout: float | None = 60.0,
        max_queued_bytes: int = 1 << 20,
    ) -> None:
        self.transport = transport
        self.connection = connection
        self.request_timeout = request_timeout
        self.max_queued_bytes = max_queued_bytes
        # What the transport offers beyond Transport, learnt once (transports.base.features):
        # the transport itself where it is a RelatedSender / NowaitSender, else None.
        self.related_sender: RelatedSender | None = related_sender(transport)
        self._nowait = nowait_sender(transport)
        # Requests made while others are in flight, to be written together (see request()).
        self._batcher = request_batcher(transport, self.send_soon, self._queueing)
        self._unrelated_send_waits = features(transport).unrelated_send_waits_for_peer
        # No more traffic: requests fail at once, and those waiting have failed.
        self._closed = False
        # Messages of send_soon waiting for the task that sends them (None: no such task),
        # with the received request each belongs to where it does.
        self._outbox: deque[bytes | tuple[bytes, RequestId]] | None = None
        self._outbox_size = 0
        self._outbox_dropped = 0
        # Where the session's own tasks start (see use_tasks); the deadlines task too, if given.
        self._spawn: Spawn | None = None
        self._timer_spawn: Spawn | None = None
        # Made when first needed: an idle inline session has none.
        self._waiters: dict[RequestId, Waiter[Any]] = {}
        self._progress: dict[str | int, Waiter[Any]] | None = None
        self._deadlines: Deadlines | None = None
        # What makes cancel scopes and events (see fastpath.scope_maker): learnt at the first.
        self._scope_type: fastpath.ScopeMaker | None = None
        self._event_type: fastpath.EventMaker | None = None
        self._flag_type: fastpath.FlagMaker | None = None

    # -- what the session driving it tells it -----------------------------------------------

    @property
    def closed(self) -> bool:
        return self._closed

    def use_tasks(self, spawn: Spawn | None, *, timer: bool = False) -> None:
        """Where tasks of the session's own start from now: ``spawn(fn, *args)`` (a task group's
        ``start_soon``), or nowhere (``None``: what :meth:`send_soon` queues is dropped). With
        ``timer``, one task also times the requests sent (see :meth:`request`)."""
        self._spawn = spawn
        self._timer_spawn = spawn if timer else None

    def close_sending(self, error: McpError) -> None:
        """No more traffic: the requests waiting for an answer fail with ``error``, new ones
        fail at once."""
        self._closed = True
        for waiter in self._waiters.values():
            if not waiter.event.is_set():
                waiter.error = error
                waiter.event.set()
        if self._deadlines is not None:
            self._deadlines.stop()  # no request waits any more: its task ends

    def on_peer_lost(self) -> None:
        """A send found the peer gone (the session driving this one acts on it)."""

    def on_response(self, event: ResponseReceived) -> None:
        waiter = self._waiters.get(event.id)
        if waiter is not None:
            waiter.result = event.result
            waiter.event.set()

    def on_error(self, event: ErrorReceived) -> None:
        waiter = self._waiters.get(event.id)
        if waiter is not None:
            waiter.error = event.error
            waiter.event.set()

    async def on_progress(self, event: ProgressReceived) -> None:
        waiter = self._progress.get(event.token) if self._progress is not None else None
        if waiter is not None and waiter.progress is not None:
            p = event.params
            total = p.total if isinstance(p.total, float | int) else None
            message = p.message if isinstance(p.message, str) else None
            # In line, so that callbacks see progress in the order it was sent: keep them quick.
            await _call_progress(waiter.progress, p.progress, total, message)

    def new_event(self) -> anyio.Event:
        """An ``anyio.Event`` (made the quickest way, see :func:`~mcpbind.fastpath.event_maker`)."""
        make = self._event_type
        if make is None:
            event = anyio.Event()
            self._event_type = fastpath.event_maker(event)
            return event
        return make()

    def new_flag(self) -> fastpath.Flag:
        """An event that one task waits on (see :func:`~mcpbind.fastpath.flag_maker`)."""
        make = self._flag_type
        if make is None:
            make = self._flag_type = fastpath.flag_maker()
        return make()

    def new_cancel_scope(self, deadline: float = math.inf) -> anyio.CancelScope:
        """An ``anyio.CancelScope`` (made the quickest way, see :func:`~mcpbind.fastpath.scope_maker`)."""
        make = self._scope_type
        if make is None:
            scope = anyio.CancelScope(deadline=deadline)
            self._scope_type = fastpath.scope_maker(scope)
            return scope
        return make(deadline=deadline)

    # -- sending ----------------------------------------------------------------------------

    async def send(self, data: bytes, related: RequestId | None = None, final: bool = False) -> None:
        """Write an encoded message to the transport; ``related`` (and ``final``) say which
        received request it answers or belongs to, for a transport that wants to know (see
        :class:`~mcpbind.transports.base.RelatedSender`). A peer that is gone is not an error
        here: the message is dropped (logged at debug level) and the session notes the peer lost."""
        try:
            if related is not None and self.related_sender is not None:
                await self.related_sender.send_related(data, related, final)
            else:
                await self.transport.send(data)
        except (anyio.BrokenResourceError, anyio.ClosedResourceError):
            log.debug("peer gone; %d bytes not sent", len(data))
            self.on_peer_lost()

    def send_soon(self, data: bytes, related: RequestId | None = None) -> bool:
        """Send an encoded message related to no request (a notification to every session, a
        log record) without waiting for anything; for code running in the event loop,
        synchronous or not. The transport takes it now if it can without waiting (its
        ``send_nowait``: True is returned); else a task of the session sends it, after the
        messages given before (answers sent meanwhile may overtake it), and the caller goes
        on. At most ``max_queued_bytes`` of
        messages wait so (or a single larger one): past that the oldest waiting are dropped,
        with a warning, so that a peer that does not read holds back no sender and makes the
        session buffer no more. Dropped at once when the session has no task to send from
        (an inline session without ``spawn``, or a session that ended). ``related``: the
        received request the message belongs to after all (a log record of a stateless
        request's handler), sent as :meth:`send` sends it (a transport that takes a message at
        once takes it so whatever it belongs to)."""
        outbox = self._outbox
        if outbox is None:
            nowait = self._nowait
            if nowait is not None and nowait.send_nowait(data):
                return True
            spawn = self._spawn
            if spawn is None:
                log.debug("no task to send %d bytes from: dropped", len(data))
                return False
            outbox = self._outbox = deque()
            spawn(self._send_queued, outbox)
        outbox.append(data if related is None else (data, related))
        self._outbox_size += len(data)
        if self._outbox_size > self.max_queued_bytes and len(outbox) > 1:
            first = not self._outbox_dropped
            while self._outbox_size > self.max_queued_bytes and len(outbox) > 1:
                dropped = outbox.popleft()
                self._outbox_size -= len(dropped[0] if isinstance(dropped, tuple) else dropped)
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
        such a message (see :class:`~mcpbind.transports.base.UnrelatedSendsNeverWait`) and
        nothing queued is ahead of it, else as
        :meth:`send_soon`. False if it was queued (then the caller lets the session's task
        run before it sends more)."""
        if self._outbox is None and not self._unrelated_send_waits:
            await self.send(data)
            return True
        return self.send_soon(data)

    def _queueing(self) -> bool:
        """Whether messages of send_soon wait for the task that sends them."""
        return self._outbox is not None

    async def _send_queued(self, outbox: deque[bytes | tuple[bytes, RequestId]]) -> None:
        """Send what :meth:`send_soon` queued, in order, until none is left."""
        try:
            while outbox and self._spawn is not None:
                item = outbox.popleft()
                if isinstance(item, tuple):
                    data, related = item
                    self._outbox_size -= len(data)
                    await self.send(data, related)
                else:
                    self._outbox_size -= len(item)
                    await self.send(item)
        finally:
            if self._outbox is outbox:
                self._outbox = None
                self._outbox_size = 0
                if self._outbox_dropped:
                    log.info("%d messages queued for the peer were dropped in all", self._outbox_dropped)
                    self._outbox_dropped = 0

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
            raise McpError(CONNECTION_CLOSED, SESSION_CLOSED)
        waiter: Waiter[R] = Waiter(progress, self.new_flag())
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
            nowait = self._nowait
            timer_spawn = self._timer_spawn
            batcher = (
                self._batcher
                if timer_spawn is not None and self._outbox is None and len(self._waiters) > 1
                else None
            )
            if (
                timer_spawn is not None
                and nowait is not None
                and (batcher is not None or nowait.send_nowait(data))
            ):
                # Sent already (or it will be, with the batch): only the wait remains, and the
                # deadlines task times it.
                if limit is not None:
                    deadlines = self._deadlines
                    if deadlines is None:
                        deadlines = self._deadlines = Deadlines()
                        timer_spawn(deadlines.run, self.new_flag, name="mcpbind request deadlines")
                    deadlines.add(time.monotonic() + limit, waiter, len(self._waiters))
                if batcher is not None:
                    await batcher.send(data)
                await waiter.event.wait()
            else:
                # The send may wait too: one scope with the deadline covers both.
                scope = self.new_cancel_scope(math.inf if limit is None else anyio.current_time() + limit)
                with scope:
                    if related is not None and self.related_sender is not None:
                        await self.related_sender.send_related(data, related)
                    else:
                        await self.transport.send(data)
                    await waiter.event.wait()
                waiter.timed_out = scope.cancelled_caught
            if waiter.timed_out:
                await self._cancel_remote(ident, "timed out")
                raise McpError(REQUEST_TIMEOUT, f"Request {spec.method} timed out after {limit} s")
        except anyio.get_cancelled_exc_class():
            await self._cancel_remote(ident, "cancelled by the caller")
            raise
        except (anyio.BrokenResourceError, anyio.ClosedResourceError):
            raise McpError(CONNECTION_CLOSED, SESSION_CLOSED) from None
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
