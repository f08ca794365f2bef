"""The POSTs of MCP 2026-07-28 (the stateless protocol) on a Streamable HTTP app: each request is
served on a fresh connection of its own, with no session (no ``Mcp-Session-Id`` is read or
issued), and answered as JSON or as an SSE stream scoped to it.

Before it is served, its headers are checked against its body (:mod:`.mirrored`). A
notification gets 202 and is dropped (the protocol defines none from the client over HTTP); a
response, 400. An error answered before anything else gets the HTTP status the specification
gives its code (400 for -32700, -32600, -32602, -32020, -32021, -32022; 404 for -32601), as
JSON.

The answer is JSON when the handler sends nothing before its response; an SSE stream (200)
once it sends something related to the request (progress, log messages, the notifications of
a ``subscriptions/listen``), or once it has been silent for ``keepalive`` seconds (a comment
then keeps the connection alive, every ``keepalive`` seconds). A stream has no event ids and
cannot be resumed; it ends with the response, and a client that goes away cancels the
request. With ``json_response`` every answer is JSON (what the handler sends before its
response is dropped), but a ``subscriptions/listen``'s, which is a stream by nature.

Nothing outlives a request: any process serving the app answers any request (no sticky
sessions needed behind a load balancer).
"""

from __future__ import annotations

import math
from collections.abc import Awaitable, Callable, Iterable
from typing import Final

import anyio
import msgspec
from msgspec import UNSET, UnsetType

from mcpbind import fastpath
from mcpbind.protocol.connection import Connection
from mcpbind.protocol.errors import (
    HEADER_MISMATCH,
    INTERNAL_ERROR,
    INVALID_PARAMS,
    INVALID_REQUEST,
    METHOD_NOT_FOUND,
    MISSING_REQUIRED_CLIENT_CAPABILITY,
    PARSE_ERROR,
    UNSUPPORTED_PROTOCOL_VERSION,
)
from mcpbind.protocol.jsonrpc import RequestId
from mcpbind.protocol.peek import PeekedRequest, peek_request
from mcpbind.protocol.wire import Codec
from mcpbind.runtime.session import Spawn
from mcpbind.transports.http._asgi import Headers, Receive, Send
from mcpbind.transports.http.disconnect import Flag, cancel_on_disconnect
from mcpbind.transports.http.endpoint import ServerEndpoint
from mcpbind.transports.http.errors import EMPTY, JSON_CONTENT_TYPE, HttpError, send_empty
from mcpbind.transports.http.server.delivery import stateless_protocol_delivery
from mcpbind.transports.http.server.mirrored import ParamHeaderChecks, check_request_headers
from mcpbind.transports.http.server.post import Helper, Post, RequestAnswers
from mcpbind.transports.http.server.request import RequestHead, peek_message
from mcpbind.transports.http.server.sessions import SessionState
from mcpbind.transports.http.server.sse_response import SSE_HEADERS, end, pump, write
from mcpbind.transports.http.server.transport import HttpSessionTransport, JsonWaiter
from mcpbind.transports.http.sse import FINAL, MESSAGE, SseQueue, SseStream
from mcpbind.transports.http.sse_encode import PING, encode_event

__all__ = ["LISTEN", "ModernPosts", "StatelessProtocolTransport", "status_of"]

LISTEN: Final = "subscriptions/listen"

# The HTTP status of an error answer, by its JSON-RPC code (others: 200).
ERROR_STATUS: Final = {
    PARSE_ERROR: 400,
    INVALID_REQUEST: 400,
    INVALID_PARAMS: 400,
    HEADER_MISMATCH: 400,
    MISSING_REQUIRED_CLIENT_CAPABILITY: 400,
    UNSUPPORTED_PROTOCOL_VERSION: 400,
    METHOD_NOT_FOUND: 404,
}


class _Code(msgspec.Struct):
    code: int


class _Answer(msgspec.Struct):
    error: _Code | UnsetType = UNSET


_ANSWER = msgspec.json.Decoder(_Answer)


def status_of(response: bytes) -> int:
    """The HTTP status of a JSON answer ``response`` (see :data:`ERROR_STATUS`)."""
    # A result's member follows the id, which is short as a rule: most answers are told apart
    # in their first bytes. (Unescaped quotes: only a member's name can be either.)
    if b'"result":' in response[:96] or b'"error":{' not in response:
        return 200
    try:
        error = _ANSWER.decode(response).error
    except msgspec.DecodeError:
        return 200
    return 200 if isinstance(error, UnsetType) else ERROR_STATUS.get(error.code, 200)


class _StatusWaiter(JsonWaiter):
    """A JSON answer whose status follows its error code (:func:`status_of`)."""

    __slots__ = ()

    async def respond(self, status: int, body: bytes) -> None:
        await super().respond(status_of(body) if status == 200 else status, body)


class StatelessProtocolTransport(HttpSessionTransport):
    """The transport of one 2026-07-28 request's connection: its events have no ids (nothing
    resumes them), its JSON answer's status follows its error code, and what it sends
    unrelated to the request is dropped (there is no GET stream; list changes reach a client on
    the stream of its ``subscriptions/listen``)."""

    __slots__ = ()

    def __init__(self, max_buffered_events: int, max_buffered_bytes: int) -> None:
        super().__init__(
            "",
            event_store=None,
            backlog=0,
            max_buffered_events=max_buffered_events,
            max_buffered_bytes=max_buffered_bytes,
        )

    def wait_json(
        self,
        ident: RequestId,
        send: Send,
        headers: Headers,
        on_initialize: Callable[[bytes], Awaitable[Headers | None]] | None,
    ) -> JsonWaiter:
        waiter = self._routes[ident] = _StatusWaiter(send, headers, None)
        return waiter

    async def _emit(self, stream: SseStream, message: bytes, kind: int) -> None:
        if kind == FINAL:
            stream.finished = True
            stream.response = message
        await stream.put(("", encode_event(message), kind))


class _Writer(Helper):
    """The helper task answering a request whose handler waits (see :meth:`ModernPosts.sse`):
    whether it started the response, and the client went away."""

    __slots__ = ("gone", "started")

    def __init__(self) -> None:
        super().__init__()
        self.gone = Flag()
        self.started = False


async def _send_json(send: Send, body: bytes) -> None:
    await send(
        {
            "type": "http.response.start",
            "status": status_of(body),
            "headers": [JSON_CONTENT_TYPE, (b"content-length", b"%d" % len(body))],
        }
    )
    await send({"type": "http.response.body", "body": body})


class ModernPosts:
    """Answers the 2026-07-28 POSTs of an app serving ``server`` (see the module's docstring),
    with ``answers`` for JSON ones; SSE streams are bounded as given and kept alive every
    ``keepalive`` seconds."""

    def __init__(
        self,
        server: ServerEndpoint,
        answers: RequestAnswers,
        *,
        json_response: bool,
        keepalive: float | None,
        max_buffered_events: int,
        max_buffered_bytes: int,
    ) -> None:
        self.server = server
        self.answers = answers
        self.json_response = json_response
        self.keepalive = keepalive
        self.max_buffered_events = max_buffered_events
        self.max_buffered_bytes = max_buffered_bytes
        self.delivery = stateless_protocol_delivery(json_response=json_response)
        self.param_headers = ParamHeaderChecks(getattr(server, "tool_input_schema", None))
        # A connection made once (when the first request comes: the server is complete by
        # then), copied for each request.
        self._ready: Connection | None = None
        # What makes the handlers' cancel scopes on the event loop the app runs on: learnt at
        # the first request of each run of the app (see :meth:`new_run`), for every request.
        self._scope_maker: fastpath.ScopeMaker | None = None

    def new_run(self) -> None:
        """The app starts or stops running (the event loop may be another one next time)."""
        self._scope_maker = None

    def _connection(self) -> Connection:
        ready = self._ready
        if ready is None:
            ready = self._ready = self.server.connection(delivery=self.delivery)
            ready.modern = True  # (every request is one of the stateless protocol's)
        return ready.fresh()

    async def answer(
        self,
        request: RequestHead,
        headers: Iterable[tuple[bytes, bytes]],
        version: str,
        body: bytes,
        sse_ok: bool,
        receive: Receive,
        send: Send,
        spawn: Spawn | None,
    ) -> None:
        """Answer the POST of ``body`` at ``version`` (its ``MCP-Protocol-Version``, one the
        server speaks); ``headers`` are the request's, ``sse_ok`` whether it accepts SSE."""
        try:
            peeked = peek_request(body)
        except msgspec.ValidationError:
            # ``params`` or its ``_meta`` is no object (else it is no JSON-RPC message, refused
            # here): the headers are checked all the same, and the body is invalid (-32602).
            plain = peek_message(body)
            peeked = PeekedRequest(plain.id, plain.method)
        except msgspec.DecodeError:
            peek_message(body)  # raises the answer
            raise
        method, ident = peeked.method, peeked.id
        if isinstance(method, UnsetType):
            if isinstance(ident, UnsetType):
                peek_message(body)  # refuses a message that is neither
            raise HttpError(
                400,
                INVALID_REQUEST,
                "Invalid request: a client of the stateless protocol sends no responses",
                None,
            )
        if isinstance(ident, UnsetType):
            await send_empty(send, 202, EMPTY)  # no notification from the client acts over HTTP
            return
        if ident is None:
            raise HttpError(400, INVALID_REQUEST, "Invalid request: the id of a request must not be null")
        check_request_headers(request, version, peeked, ident)
        if method == "tools/call":
            self.param_headers.check(peeked, headers, ident)
        listen = method == LISTEN
        if listen and not sse_ok:
            raise HttpError(
                406,
                INVALID_REQUEST,
                "Not Acceptable: subscriptions/listen is answered with text/event-stream",
                ident,
            )
        transport = StatelessProtocolTransport(self.max_buffered_events, self.max_buffered_bytes)
        transport.protocol_version = version
        ready = self._ready
        session = self.server.inline_session(
            transport,
            spawn=spawn,
            register=listen,
            connection=self._connection() if ready is None else ready.fresh(),
        )
        if spawn is not None:  # (the app runs: one event loop until new_run)
            maker = self._scope_maker
            if maker is None:
                maker = self._scope_maker = fastpath.scope_maker(anyio.CancelScope())
            session.scope_maker = maker
        state = SessionState("", transport, session)
        # (JSON: the request's handler runs in this task, as for a session's POST.)
        answer = self.answers.json if self.json_response and not listen else self.sse
        if spawn is not None and not listen:  # the usual request
            await answer(Post(state, ident, body, receive, send, False, spawn))
            return
        try:
            if spawn is not None:
                await answer(Post(state, ident, body, receive, send, False, spawn))
                return
            # No lifespan: a task group of this request's own, opened before the handler starts.
            async with anyio.create_task_group() as tg:
                await answer(Post(state, ident, body, receive, send, False, tg.start_soon))
        finally:
            if listen:
                with anyio.CancelScope(shield=True):
                    await self.server.end_session(session)

    async def sse(self, post: Post) -> None:
        """The request's handler runs in this task; what it sends is collected by its stream.
        A handler that finishes at once is answered in one go (JSON if it sent nothing but its
        response); one that waits for something gets a helper task that answers as it comes
        (:meth:`_write`) and watches for the client going away."""
        state, ident, body, receive, send, _, spawn = post
        transport = state.transport
        stream = transport.open_stream(ident)
        items = stream.collect()
        helper: _Writer | None = None
        queue: SseQueue | None = None

        def on_suspend() -> None:
            nonlocal helper, queue
            helper = _Writer()
            queue = stream.to_queue(items)
            spawn(self._write, state, stream, queue, receive, send, helper)

        try:
            await state.session.feed(body, on_suspend)
            if helper is not None:
                if queue is not None and not stream.finished:
                    stream.release(queue)  # no response is coming (cancelled): the stream ends
                await helper.done.wait()
                if not helper.ended and not helper.gone.set:  # the helper was stopped (the app stops)
                    if helper.started:
                        await end(send)
                    else:
                        raise HttpError(503, INTERNAL_ERROR, "The server is stopping", ident)
                return
        except BaseException:
            if queue is not None:
                stream.release(queue)
            transport.forget(stream)
            raise
        finally:
            if helper is not None:
                helper.scope.cancel()
        stream.stop_collecting(items)
        transport.forget(stream)
        response = stream.response
        if response is not None and len(items) == 1:
            await _send_json(send, response)
            return
        if response is None and not items:
            raise HttpError(500, INTERNAL_ERROR, "The request ended without a response", ident)
        await send({"type": "http.response.start", "status": 200, "headers": SSE_HEADERS})
        await end(send, b"".join(chunk for _, chunk, _ in items))

    async def _write(
        self,
        state: SessionState,
        stream: SseStream,
        queue: SseQueue | None,
        receive: Receive,
        send: Send,
        helper: _Writer,
    ) -> None:
        """Answer a request whose handler waits for something, while it runs in the POST's
        task: JSON if its response comes first and soon, else an SSE stream of what it sends,
        kept alive while it is silent, ended after its response. The client going away (or
        the app stopping) cancels the request."""
        try:
            with helper.scope:
                async with anyio.create_task_group() as tg:
                    tg.start_soon(cancel_on_disconnect, receive, tg.cancel_scope, helper.gone)
                    await self._stream(stream, queue, send, helper)
                    tg.cancel_scope.cancel()
        finally:
            if queue is not None:
                stream.release(queue)
            state.transport.forget(stream)
            if not stream.finished and stream.request_id is not None:
                # The client went away, or the app stops (its task group is cancelled): nobody
                # gets the answer any more.
                state.transport.drop_route(stream.request_id)
                state.session.cancel_received(stream.request_id)
            helper.done.set()

    async def _stream(self, stream: SseStream, queue: SseQueue | None, send: Send, helper: _Writer) -> None:
        first = None
        if queue is not None:
            with anyio.move_on_after(math.inf if self.keepalive is None else self.keepalive):
                try:
                    first = await queue.receive()
                except anyio.EndOfStream:
                    queue = None
        helper.started = True
        if first is not None and first[2] == FINAL and stream.response is not None:
            await _send_json(send, stream.response)
            helper.ended = True
            return
        if first is None and queue is None:  # cancelled before it sent anything
            body = Codec.encode_error(
                stream.request_id, INTERNAL_ERROR, "The request ended without a response"
            )
            await send({"type": "http.response.start", "status": 500, "headers": [JSON_CONTENT_TYPE]})
            await send({"type": "http.response.body", "body": body})
            helper.ended = True
            return
        await send({"type": "http.response.start", "status": 200, "headers": SSE_HEADERS})
        await write(send, PING if first is None else first[1])
        if (first is None or first[2] == MESSAGE) and queue is not None:
            await pump(queue, send, set(), self.keepalive)
        await end(send)
        helper.ended = True
