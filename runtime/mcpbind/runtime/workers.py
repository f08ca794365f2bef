"""The tasks of a session that reads its transport itself (stdio, memory): leader and followers
(:class:`Workers`). The task that reads runs what it reads, a request's handler included, and
hands reading over to another task only when a handler waits for something."""

from __future__ import annotations

import contextvars
import logging
from collections import deque
from collections.abc import Awaitable, Callable

import anyio
import anyio.abc

from mcpbind import fastpath
from mcpbind.protocol.connection import Event, RequestReceived
from mcpbind.protocol.errors import INVALID_REQUEST
from mcpbind.protocol.jsonrpc import RequestId
from mcpbind.protocol.wire import Codec
from mcpbind.runtime.handlers import RequestHandler
from mcpbind.runtime.sender import Sender
from mcpbind.transports.base import MessageTooLarge

__all__ = ["Job", "RunHandler", "Workers"]

log = logging.getLogger("mcpbind")

# A request given a place to run: its handler, itself, and the scope it waited in (if it did).
Job = tuple[RequestHandler, RequestReceived, anyio.CancelScope | None]

# Runs a request's handler and sends its answer (Session's): ``run(handler, event, scope,
# context, on_suspend)``, inside ``scope``.
RunHandler = Callable[
    [RequestHandler, RequestReceived, anyio.CancelScope, contextvars.Context, Callable[[], None] | None],
    Awaitable[None],
]


class _Lead:
    """A worker's time as the leader: ``leading`` until a handler it runs waits for something
    (then reading is handed over); ``running`` while that handler runs."""

    __slots__ = ("leading", "running", "workers")

    def __init__(self, workers: Workers) -> None:
        self.workers = workers
        self.leading = True
        self.running = False

    def hand_over(self) -> None:
        self.leading = False
        self.workers.hand_over()

    def handed_over(self) -> bool:
        return not self.leading

    def cut_short(self) -> bool:
        """Whether the handler running was cancelled (the scope came out in the middle)."""
        return self.running


class Workers:
    """A pool of worker tasks reading one session's transport (leader and followers).

    The one that reads (the leader) also runs the handler of each request it reads, in line,
    and goes on reading when it returns without having waited for anything. A handler that
    waits makes its task hand reading over (to an idle worker, or a new one, up to
    ``max_concurrent_requests`` + 1 of them, kept for the session's life) before it waits: a
    quick request costs no task switch, no queue, no new task. Each handler runs in a copy of
    ``context`` (see :func:`~mcpbind.fastpath.first_step`), never in the worker's own context,
    which stays as the session's start left it. ``limit`` handlers run at once; past that,
    requests wait in order for a place, cancellable meanwhile (their scopes in ``handlers``).

    What the session does for it: ``refuse(event)`` gives a request's handler, or the error
    answer that refuses it; ``act(event)`` acts on any other event; ``run`` runs a handler;
    ``drop(ident, scope)`` forgets a request's scope; ``end_of_input(peer_gone)`` is called
    once nothing more comes in (with ``peer_gone``: the peer is gone altogether). On the plain
    path (:mod:`mcpbind.fastpath`), every handler counts as waiting, and a worker with nothing
    to do ends instead of waiting to lead again.
    """

    __slots__ = (
        "_active",
        "_idle",
        "_inbox",
        "_waiting",
        "act",
        "context",
        "drop",
        "end_of_input",
        "group",
        "handlers",
        "input_done",
        "limit",
        "refuse",
        "run",
        "sender",
    )

    def __init__(
        self,
        sender: Sender,
        group: anyio.abc.TaskGroup,
        context: contextvars.Context,
        handlers: dict[RequestId, anyio.CancelScope],
        limit: int,
        input_done: anyio.Event,
        *,
        refuse: Callable[[RequestReceived], tuple[RequestHandler | None, bytes | None]],
        act: Callable[[Event], Awaitable[None]],
        run: RunHandler,
        drop: Callable[[RequestId, anyio.CancelScope], None],
        end_of_input: Callable[[bool], None],
    ) -> None:
        self.sender = sender
        self.group = group
        self.context = context
        self.handlers = handlers
        self.limit = limit
        self.input_done = input_done
        self.refuse = refuse
        self.act = act
        self.run = run
        self.drop = drop
        self.end_of_input = end_of_input
        self._active = 0  # handlers running
        self._waiting: deque[Job] = deque()  # requests waiting for a place
        self._inbox: deque[Event] = deque()  # the rest of a batch, for whoever reads next
        self._idle = fastpath.new_parking()

    def start(self) -> None:
        self.group.start_soon(self._work, name="mcpbind session worker")

    def wind_down(self) -> None:
        """The input ended: idle workers end (those running handlers once they are done)."""
        self._idle.wake_all()

    async def _work(self) -> None:
        """A worker: lead (read, and run what is read) until it hands reading over, then wait
        until it is given reading back. Ends with the input."""
        while not self.input_done.is_set():
            await self._lead()
            if self.input_done.is_set() or not await self._idle.park():
                return  # (plain path: a worker is not kept, see fastpath.Parking)

    def hand_over(self) -> None:
        """The leader's handler is about to wait: another worker reads meanwhile."""
        if not self._idle.wake_one():
            self.group.start_soon(self._work, name="mcpbind session worker")

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
        context = self.context
        handlers = self.handlers
        run = self.run
        while True:
            lead = _Lead(self)
            job: Job | None = None
            scope = self.sender.new_cancel_scope()
            with scope:
                while not lead.handed_over():
                    job = await self._read_request()
                    if job is None:
                        return  # the end of input
                    while job is not None:
                        handler, event, _ = job
                        handlers[event.id] = scope
                        lead.running = True
                        await run(handler, event, scope, context.copy(), lead.hand_over)
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
                    await run(handler, event, own, context.copy(), None)
                job = self._next_job()
            return

    async def _read_request(self) -> Job | None:
        """Read and act on messages until a request may run now (its place is taken), or
        ``None`` at the end of input. Requests are refused (answered here) past
        ``max_pending_requests`` and wait past ``limit``."""
        inbox = self._inbox
        sender = self.sender
        while True:
            if inbox:
                event = inbox.popleft()
            else:
                try:
                    data = await sender.transport.receive()
                except MessageTooLarge as exc:
                    await sender.send(Codec.encode_error(None, INVALID_REQUEST, f"Invalid request: {exc}"))
                    continue
                except anyio.EndOfStream:
                    self.end_of_input(False)
                    return None
                except (anyio.ClosedResourceError, anyio.BrokenResourceError):
                    self.end_of_input(True)  # not a peer that is done sending: one gone, or us
                    return None
                try:
                    events = sender.connection.receive(data)
                except Exception:  # a bug, not bad input: the core answers bad input itself
                    log.exception("could not process a received message; the session goes on")
                    continue
                if len(events) != 1:
                    inbox.extend(events)  # a batch, or nothing
                    continue
                event = events[0]
            if not isinstance(event, RequestReceived):
                await self.act(event)
                continue
            handler, refusal = self.refuse(event)
            if handler is None:
                if refusal is not None:
                    await sender.send(refusal, event.id, True)
                continue
            if self._active < self.limit:
                self._active += 1
                return handler, event, None
            # It waits for a place, cancellable meanwhile.
            scope = sender.new_cancel_scope()
            self.handlers[event.id] = scope
            self._waiting.append((handler, event, scope))

    def _next_job(self) -> Job | None:
        """A handler finished: its place goes to the first request waiting for one, if any."""
        waiting = self._waiting
        while waiting:
            job = waiting.popleft()
            scope = job[2]
            assert scope is not None
            if not scope.cancel_called:
                return job
            self.drop(job[1].id, scope)  # cancelled while it waited
        self._active -= 1
        return None
