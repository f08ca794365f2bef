"""Answering a request that a POST brings to a Streamable HTTP session: the request's handler
runs in the POST's own task, and the answer is one JSON body (``json_response=True``) or an SSE
stream carrying what the handler sends, then its response.

A handler that answers at once, as most do, needs nothing more: its whole answer is written in
one go. One that waits for something gets a helper task (:class:`Helper`) that watches for the
client going away, and writes the SSE stream as it comes. A client that goes away cancels its
request, unless its SSE stream can be resumed (an event store is configured): then the handler
goes on and its events are kept for a ``GET`` with ``Last-Event-ID``.
"""

from __future__ import annotations

import logging
from typing import NamedTuple

import anyio

from mcpbind.protocol.errors import INTERNAL_ERROR
from mcpbind.protocol.jsonrpc import RequestId
from mcpbind.runtime.session import Spawn
from mcpbind.store.errors import StoreUnavailable
from mcpbind.transports.http._asgi import Headers, Receive, Send
from mcpbind.transports.http.disconnect import Flag, cancel_on_disconnect, wait_disconnect
from mcpbind.transports.http.errors import JSON_CONTENT_TYPE, SESSION_NOT_FOUND, HttpError
from mcpbind.transports.http.server.sessions import SessionState, SessionTable
from mcpbind.transports.http.server.sse_response import SSE_HEADERS, end, pump, write
from mcpbind.transports.http.server.transport import POLLING_VERSION, JsonWaiter
from mcpbind.transports.http.sse import CLOSE, FINAL, MESSAGE, SseItem, SseQueue, SseStream

log = logging.getLogger("mcpbind.http")

__all__ = ["Helper", "Post", "RequestAnswers"]


class Helper:
    """A task helping a POST whose handler waits for something: it watches for the client
    going away (and writes the SSE stream). ``scope`` stops it; ``done`` is set when it ends."""

    __slots__ = ("done", "ended", "scope")

    def __init__(self) -> None:
        self.scope = anyio.CancelScope()
        self.done = anyio.Event()
        self.ended = False  # it wrote the end of the response


class Post(NamedTuple):
    """A request that its POST's task answers (:meth:`RequestAnswers.json`, :meth:`RequestAnswers.sse`)."""

    state: SessionState
    ident: RequestId
    body: bytes
    receive: Receive
    send: Send
    initialize: bool  # the request is initialize: the session's headers wait for its answer
    spawn: Spawn


class RequestAnswers:
    """Answers the requests POSTed to the sessions of ``sessions`` (the table decides whether an
    ``initialize`` answer keeps its session); an SSE stream that says nothing for ``keepalive``
    seconds gets a comment."""

    def __init__(self, sessions: SessionTable, keepalive: float | None) -> None:
        self.sessions = sessions
        self.keepalive = keepalive

    async def json(self, post: Post) -> None:
        """The request's handler runs in this task and writes the response to ``send`` itself
        (through the transport). Only if it waits for something does a helper task watch for
        the client going away meanwhile, which cancels it."""
        state, ident, body, receive, send, initialize, spawn = post
        transport = state.transport
        headers = [JSON_CONTENT_TYPE] if initialize else [JSON_CONTENT_TYPE, *state.header]
        on_initialize = (lambda data: self._initialized(state, data)) if initialize else None
        waiter = transport.wait_json(ident, send, headers, on_initialize)
        helper: Helper | None = None

        def on_suspend() -> None:
            nonlocal helper
            helper = Helper()
            spawn(self._watch_json, state, ident, waiter, receive, helper)

        try:
            try:
                await state.session.feed(body, on_suspend)
            except anyio.ClosedResourceError:
                raise HttpError(404, SESSION_NOT_FOUND, "Session ended") from None
            if helper is not None:
                await helper.done.wait()
            elif not waiter.answered:  # cancelled by the client: nothing comes until it goes
                await wait_disconnect(receive)
                waiter.answered = True
                transport.drop_route(ident)
        finally:
            if helper is not None:
                helper.scope.cancel()

    async def _initialized(self, state: SessionState, answer: bytes) -> Headers | None:
        """The headers of the JSON answer to initialize; ``None`` when the session could not be
        recorded (the store is away: the answer becomes a 503)."""
        if not self.sessions.initialized(state, answer):
            return []
        try:
            await self.sessions.record(state)
        except StoreUnavailable as lost:
            log.warning("a session could not be recorded, the store being unavailable: %s", lost)
            return None
        return list(state.header)

    async def _watch_json(
        self, state: SessionState, ident: RequestId, waiter: JsonWaiter, receive: Receive, helper: Helper
    ) -> None:
        try:
            with helper.scope:
                # The ASGI server ends receive() with http.disconnect once the response is
                # written, or when the client goes away first.
                await wait_disconnect(receive)
                if not waiter.answered:
                    waiter.answered = True
                    state.transport.drop_route(ident)
                    state.session.cancel_received(ident)
        finally:
            helper.done.set()

    async def sse(self, post: Post) -> None:
        """The request's handler runs in this task; what it sends is collected by its stream. A
        handler that finishes at once leaves its whole answer there, written in one go; one
        that waits for something gets a helper task that writes the stream as it comes (from a
        queue) and watches for the client going away."""
        state, ident, body, receive, send, initialize, spawn = post
        transport = state.transport
        stream = transport.open_stream(ident)
        items = stream.collect()
        headers = list(SSE_HEADERS)
        first: list[bytes] = []
        if not initialize:
            headers += state.header
            version = transport.protocol_version
            if transport.event_store is not None and version is not None and version >= POLLING_VERSION:
                first.append(await transport.prime(stream))
            # (An initialize is answered at once, by the core: its headers wait for the answer.)
            await send({"type": "http.response.start", "status": 200, "headers": headers})
        helper: Helper | None = None
        queue: SseQueue | None = None
        gone = Flag()

        def on_suspend() -> None:
            nonlocal helper, queue
            helper = Helper()
            queue = stream.to_queue(items)
            spawn(self._write_sse, state, stream, first, items, queue, receive, send, helper, gone)

        try:
            try:
                await state.session.feed(body, on_suspend)
            except anyio.ClosedResourceError:  # it ended while this POST was being answered
                transport.forget(stream)
                if initialize:
                    raise HttpError(404, SESSION_NOT_FOUND, "Session ended") from None
                await end(send, b"".join(first))
                return
            if helper is not None:
                if queue is not None and not stream.finished:
                    stream.release(queue)  # no response is coming (cancelled): the stream ends
                await helper.done.wait()
                if not gone.set and not helper.ended:
                    await end(send)
                return
        except BaseException:
            if queue is not None:
                stream.release(queue)
            transport.forget(stream)
            raise
        finally:
            if helper is not None:
                helper.scope.cancel()
        # Everything the handler sent was collected: write it all.
        stream.stop_collecting(items)
        outcome: int | None = None
        for _, chunk, kind in items:
            first.append(chunk)
            if kind != MESSAGE:
                outcome = kind
                break
        if initialize:
            if stream.response is None:
                transport.forget(stream)
                raise HttpError(500, INTERNAL_ERROR, "The session ended during initialize", ident)
            if self.sessions.initialized(state, stream.response):
                await self.sessions.record(state)  # (an error here is the app's to answer)
                headers += state.header
        if outcome == FINAL:
            await transport.finished(stream)
        elif outcome != CLOSE:
            transport.forget(stream)
        if initialize:
            await send({"type": "http.response.start", "status": 200, "headers": headers})
        await end(send, b"".join(first))

    async def _write_sse(
        self,
        state: SessionState,
        stream: SseStream,
        first: list[bytes],
        items: list[SseItem],
        queue: SseQueue | None,
        receive: Receive,
        send: Send,
        helper: Helper,
        gone: Flag,
    ) -> None:
        """Write a POST's SSE stream while its handler runs in the POST's task: what was
        collected, then what comes in ``queue`` (none: the stream was detached before), and end
        the response once the stream is answered or closed for polling (the POST's task ends it
        otherwise, once its handler returns)."""
        transport = state.transport
        outcome: int | None = None
        try:
            with helper.scope:
                async with anyio.create_task_group() as tg:
                    tg.start_soon(cancel_on_disconnect, receive, tg.cancel_scope, gone)
                    for chunk in first:
                        await write(send, chunk)
                    for _, chunk, kind in items:
                        await write(send, chunk)
                        if kind != MESSAGE:
                            outcome = kind
                            break
                    if outcome is None and queue is not None:
                        outcome = await pump(queue, send, set(), self.keepalive)
                    tg.cancel_scope.cancel()
                if outcome == FINAL:
                    await transport.finished(stream)
                elif outcome != CLOSE and gone.set:
                    if transport.event_store is not None:
                        if queue is not None:
                            stream.release(queue)  # the handler goes on; a GET with Last-Event-ID resumes
                    else:
                        transport.forget(stream)
                        if not stream.finished and stream.request_id is not None:
                            transport.drop_route(stream.request_id)
                            state.session.cancel_received(stream.request_id)
                elif outcome is None:
                    transport.forget(stream)
                if not gone.set and outcome is not None and outcome != MESSAGE:
                    # Answered, or closed for polling while the handler goes on: done now.
                    helper.ended = True
                    await end(send)
        finally:
            if queue is not None:
                stream.release(queue)  # (a stream taken over by a GET meanwhile stays with it)
            helper.done.set()
