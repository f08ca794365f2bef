"""The Streamable HTTP transport, client side (on httpx).

Each message the client sends is one HTTP POST to the server's MCP endpoint. The server answers
a notification or a response with 202 and no body, and a request with either one JSON body or
an SSE stream (``text/event-stream``) that carries messages about the request (progress,
logging, requests to the client such as sampling) and finally its response. A GET on the same
endpoint opens a stream for messages unrelated to any request; a server without one answers 405.

What this transport does about it:

* **Sessions.** The ``Mcp-Session-Id`` the server gives with the initialize response is sent
  with every later HTTP request, and so is ``MCP-Protocol-Version`` once the initialize result
  (seen passing through, cheaply) has named the negotiated version. When a request carrying a
  session id gets 404, the session has expired: the transport starts a new one by itself (it
  sends the client's original initialize again, under a new id, keeps its answer to itself,
  sends ``notifications/initialized``) and sends the failed message once more.
* **Streams.** SSE streams are read in background tasks; every event with data is a message
  and goes to :meth:`~StreamableHTTPTransport.receive`, events without data (the priming event)
  only move the stream's position. A stream that ends before the response to its request came
  is resumed with a GET carrying ``Last-Event-ID``, after the delay of the server's ``retry:``
  field (``reconnect_delay`` when it sent none), up to ``max_reconnects`` times in a row (an
  attempt that delivers events resets the count). The GET stream is opened once the server
  has accepted ``notifications/initialized``, and resumed the same way when it drops.
* **Failures never hang a request.** A request that cannot be completed (network error,
  timeout, an HTTP error status, a body that is not JSON or holds no response to it, a stream
  that ends and cannot be resumed, an expired session that cannot be renewed) gets a JSON-RPC
  error response, made here and delivered through ``receive()``, so the caller's request
  raises :class:`~mcpbind.protocol.errors.McpError` naming the cause (``error.data`` holds the HTTP
  ``status`` and ``body`` where there was one). Failures of notifications and responses are
  logged (there is nobody to tell).
* **The backward-compatibility probe.** The spec has a client that supports old servers POST
  initialize first and fall back to the 2024-11-05 HTTP+SSE transport on 400, 404 or 405.
  For that, ``send()`` raises :class:`HTTPTransportError` (status and body) when the first
  initialize gets a 4xx status, instead of turning it into an error response; it comes out of
  ``Client.connect``. :attr:`StreamableHTTPTransport.initialize_status` tells the status the
  initialize POST got, whatever it was.
* **Limits.** ``max_message_size`` bounds every received message: a JSON body or SSE event
  larger than that is never held in memory whole. On the stream of a request, or as its JSON
  body, an oversized message fails that request; on the GET stream ``receive()`` raises
  :class:`~mcpbind.transports.base.MessageTooLarge` for it and the stream goes on.
* **Connections.** Over HTTP/1.1 every request in flight holds a connection (its POST stays
  open until the response came), so the client limits itself: at most
  ``max_requests_in_flight`` requests are sent at once (more wait here, in order, for a
  place; never in httpx's pool, where they would count against ``timeout``). Pings,
  notifications (``notifications/cancelled`` above all) and responses to the server's
  requests go by a lane of their own, :data:`CONTROL_CONNECTIONS` at a time, so they never
  wait behind calls; the GET stream has its own room too. The ``httpx.AsyncClient`` made here
  has a pool of :func:`connection_limits` for that; a client you pass should be made with
  ``limits=connection_limits(max_requests_in_flight)``: in httpx's default pool of 100
  connections, from 99 requests in flight every other message waits for the pool (and fails
  after ``timeout``).
  ``notifications/cancelled`` is sent in the background (``send()`` returns at once), and
  once it is delivered the transport stops reading (and resuming) the stream of the request
  it names, which frees that request's connection and place: no response is coming.
* **Timeouts.** ``timeout`` bounds connecting, sending, waiting for the response headers and
  reading a JSON body, and the DELETE on close; ``sse_read_timeout`` is how long an SSE stream
  may stay silent before it counts as dropped (and is resumed if it can be).
* **Closing.** ``aclose()`` sends DELETE with the session id (405 and errors are ignored: the
  server may not allow it), stops every background stream and ends ``receive()``.

The parts, each in a module of this package: :mod:`.core` (state, one HTTP exchange, the
queue ``receive()`` reads), :mod:`.streams` (SSE streams and their resumption),
:mod:`.renewal` (a new session after 404), :mod:`.lanes` (the connection budget),
:mod:`.messages` (what routing reads of a message) and :mod:`.sse_parse`. SSE is parsed there
rather than with httpx-sse, whose decoder holds a whole line or event in memory however large
it grows: :class:`~mcpbind.transports.http.client.sse_parse.SSEDecoder` works on bytes (no
text round trip for the message payloads) and drops oversized events while they arrive.
"""

from __future__ import annotations

import logging
import sys
from collections.abc import AsyncIterator, Mapping
from contextlib import asynccontextmanager
from typing import Any

import anyio
import anyio.abc
import httpx
import msgspec

from mcpbind.exception_groups import only_error
from mcpbind.protocol.errors import (
    CONNECTION_CLOSED,
    INTERNAL_ERROR,
    REQUEST_TIMEOUT,
    UNSUPPORTED_PROTOCOL_VERSION,
)
from mcpbind.protocol.jsonrpc import RequestId
from mcpbind.protocol.peek import Peeked
from mcpbind.protocol.wire import Codec
from mcpbind.transports.base import DEFAULT_MAX_MESSAGE_SIZE
from mcpbind.transports.http.client.core import EVENT_STREAM, JSON, SESSION_HEADER
from mcpbind.transports.http.client.errors import Failure, HTTPTransportError
from mcpbind.transports.http.client.headers import stateless_headers
from mcpbind.transports.http.client.lanes import DEFAULT_MAX_REQUESTS_IN_FLIGHT, Place, connection_limits
from mcpbind.transports.http.client.messages import cancelled_request, is_response_to, peek_message, split
from mcpbind.transports.http.client.renewal import SessionRenewal
from mcpbind.transports.http.client.responses import (
    ERROR_BODY_LIMIT,
    close,
    error_body,
    media_type,
    read_body,
)

if sys.version_info < (3, 11):  # pragma: no cover
    from exceptiongroup import BaseExceptionGroup

__all__ = ["HTTPTransportError", "StreamableHTTPTransport", "open_streamable_http"]

log = logging.getLogger("mcpbind.http.client")


class _Error(msgspec.Struct):
    code: int
    message: str
    data: Any = msgspec.UNSET


class _ErrorBody(msgspec.Struct):
    error: _Error


_error_body = msgspec.json.Decoder(_ErrorBody)


class StreamableHTTPTransport(SessionRenewal):
    """A :class:`~mcpbind.transports.base.Transport` to one Streamable HTTP MCP endpoint.

    Made by :func:`open_streamable_http`, which owns its background tasks and HTTP client.
    ``related`` and ``final`` of ``send()`` are not needed on this side and ignored.
    ``send()`` of a request waits while ``max_requests_in_flight`` requests are in flight
    (a ping excepted: it goes with the control messages).
    """

    # -- Transport --------------------------------------------------------------------------

    async def send(self, message: bytes) -> None:
        if self._closed:
            raise anyio.ClosedResourceError
        envelope = peek_message(message)
        if envelope is None:
            raise ValueError("not a JSON-RPC message")
        if envelope.method == "initialize" and self._initialize_message is None:
            self._initialize_message = message
            self._initialize_id = envelope.id if isinstance(envelope.id, int | str) else None
        elif envelope.method == "notifications/initialized":
            self._initialized_message = message
        elif envelope.method == "notifications/cancelled":
            ident = cancelled_request(message)
            if ident is not None and ident in self._stateless_requests:
                # A stateless request is cancelled by closing its stream; nothing is sent.
                scope = self._request_streams.pop(ident, None)
                if scope is not None:
                    scope.cancel()
                return
            # Delivered in the background: the caller (a cancelled request) waits for it only
            # briefly, and it may have to wait for a place behind other control messages.
            self._tasks.start_soon(self._background, self._cancel, message, envelope)
            return
        is_request = isinstance(envelope.method, str) and isinstance(envelope.id, int | str)
        place = Place(self._requests if is_request and envelope.method != "ping" else self._control)
        await place.take()
        try:
            await self._post(message, envelope, place, may_renew=True)
        except Failure as failure:
            await self._fail(envelope, failure)
        finally:
            if not place.streaming:
                place.give_back()

    async def _cancel(self, message: bytes, envelope: Peeked) -> None:
        """Send ``notifications/cancelled``; then stop reading (or resuming) the stream of the
        request it names, which frees its connection and its place: no response is coming."""
        place = Place(self._control)
        try:
            await place.take()
            await self._post(message, envelope, place, may_renew=True)
        except Failure as failure:
            await self._fail(envelope, failure)
        finally:
            place.give_back()
            ident = cancelled_request(message)
            if ident is not None:
                scope = self._request_streams.pop(ident, None)
                if scope is not None:
                    scope.cancel()

    async def aclose(self) -> None:
        if self._closed:
            return
        self._closed = True
        with anyio.CancelScope(shield=True):
            if self.terminate_on_close and self.session_id is not None:
                await self._delete_session()
            for scope in list(self._scopes):
                scope.cancel()
            self._incoming_send.close()
            self._received.close()

    # -- POST and its answer ------------------------------------------------------------------

    async def _post(self, message: bytes, envelope: Peeked, place: Place, *, may_renew: bool) -> None:
        """POST one message and route what comes back. Raises :class:`Failure`. A request's
        stream is read in the background, which gives ``place`` back when it ends."""
        is_initialize = envelope.method == "initialize"
        stateless = stateless_headers(message, self.tool_param_headers)
        if stateless is not None:
            # A stateless request: its own version and the mirrored headers, no session.
            headers = self._request_headers(f"{JSON}, {EVENT_STREAM}", initialize=True)
            headers.update(stateless)
        else:
            headers = self._request_headers(f"{JSON}, {EVENT_STREAM}", initialize=is_initialize)
        headers["content-type"] = JSON
        sent_session = None if is_initialize or stateless is not None else self.session_id
        request = self._client.build_request(
            "POST", self.url, content=message, headers=headers, timeout=self._stream_timeout
        )
        response = await self._open(request)
        if stateless is not None and isinstance(envelope.id, int | str):
            self._stateless_requests.add(envelope.id)
        handed_over = False
        try:
            status = response.status_code
            if is_initialize:
                self.initialize_status = status
            if status == 404 and sent_session is not None:
                await close(response)
                if not may_renew:
                    raise Failure(
                        CONNECTION_CLOSED,
                        f"HTTP 404 again in the new session ({SESSION_HEADER} {sent_session})",
                        404,
                    )
                if await self._renew_session(sent_session):
                    if envelope.method != "notifications/initialized":  # the renewal sent it
                        await self._post(message, envelope, place, may_renew=False)
                    return
                raise Failure(
                    CONNECTION_CLOSED,
                    f"The server ended the session ({SESSION_HEADER} {sent_session}) and a new one "
                    "could not be started",
                    404,
                )
            if not 200 <= status < 300:
                if isinstance(envelope.id, int | str) and media_type(response) == JSON:
                    # A JSON-RPC error at an HTTP error status (a stateless server's 400 for an
                    # unsupported version, 404 for an unknown method): the request gets it.
                    error, body = await self._json_error(response, envelope.id, is_initialize)
                    if error is not None:
                        await self._deliver(error)
                        return
                else:
                    body = await error_body(response)
                if is_initialize and 400 <= status < 500:
                    raise HTTPTransportError(status, body)
                raise Failure(
                    INTERNAL_ERROR,
                    f"HTTP {status} {httpx.codes.get_reason_phrase(status)} from POST {self.url}"
                    + (f": {body}" if body else ""),
                    status,
                    body,
                )
            if is_initialize:
                self._learn_session(response)
            if not isinstance(envelope.method, str) or not isinstance(envelope.id, int | str):
                # A notification or a response: accepted, nothing comes back.
                if envelope.method == "notifications/initialized":
                    await self._open_get_stream()
                return
            ident = envelope.id
            media = media_type(response)
            if media == EVENT_STREAM:
                place.streaming = True
                try:
                    await self._tasks.start(self._background, self._post_stream, response, ident, place)
                except BaseException:
                    place.streaming = False
                    raise
                handed_over = True
            elif media == JSON:
                await self._deliver_json(response, ident)
            else:
                body = await error_body(response)
                raise Failure(
                    INTERNAL_ERROR,
                    f"HTTP {status} from POST {self.url} with content type {media or 'none'!r} "
                    f"instead of {JSON} or {EVENT_STREAM}; no response to request {ident!r}",
                    status,
                    body,
                )
        except httpx.HTTPError as exc:
            raise Failure(CONNECTION_CLOSED, f"POST {self.url} failed while reading: {exc!r}") from None
        finally:
            if not handed_over:
                if stateless is not None and isinstance(envelope.id, int | str):
                    self._stateless_requests.discard(envelope.id)
                await close(response)

    async def _deliver_json(self, response: httpx.Response, ident: RequestId) -> None:
        try:
            with anyio.fail_after(self._timeout):
                body = await read_body(response, self.max_message_size)
        except TimeoutError:
            raise Failure(
                REQUEST_TIMEOUT, f"The JSON answer to request {ident!r} took over {self._timeout} s to arrive"
            ) from None
        if body is None:
            raise Failure(
                INTERNAL_ERROR,
                f"The response to request {ident!r} exceeds the limit of {self.max_message_size} bytes",
            )
        messages = split(body)
        peeked = [peek_message(item) for item in messages]
        if any(item is None for item in peeked):
            raise Failure(
                INTERNAL_ERROR,
                f"POST {self.url} answered with a body that is not a JSON-RPC message: "
                f"{body[:200].decode('utf-8', 'replace')!r}",
                response.status_code,
                body[:ERROR_BODY_LIMIT].decode("utf-8", "replace"),
            )
        if not any(is_response_to(item, ident) for item in peeked):
            raise Failure(
                INTERNAL_ERROR,
                f"POST {self.url} answered with JSON that holds no response to request {ident!r}",
            )
        for item, envelope in zip(messages, peeked, strict=True):
            await self._deliver(item, envelope)

    async def _json_error(
        self, response: httpx.Response, ident: RequestId, initialize: bool
    ) -> tuple[bytes | None, str]:
        """The JSON-RPC error in an error status's body, as the response to ``ident`` (``None``
        when the body holds none; for initialize, none but -32022, which tells a stateless
        server from a legacy one), and the start of the body, for messages."""
        try:
            with anyio.fail_after(self._timeout):
                body = await read_body(response, ERROR_BODY_LIMIT)
        except (TimeoutError, httpx.HTTPError):
            return None, ""
        if body is None:
            return None, ""
        text = body.decode("utf-8", "replace").strip()
        try:
            error = _error_body.decode(body).error
        except (msgspec.DecodeError, msgspec.ValidationError):
            return None, text
        if initialize and error.code != UNSUPPORTED_PROTOCOL_VERSION:
            return None, text
        return Codec.encode_error(ident, error.code, error.message, error.data), text

    async def _fail(self, envelope: Peeked, failure: Failure) -> None:
        """A request gets an error response made here; anything else is only logged."""
        if isinstance(envelope.method, str) and isinstance(envelope.id, int | str):
            await self._fail_request(envelope.id, failure)
        else:
            what = envelope.method if isinstance(envelope.method, str) else f"response to {envelope.id!r}"
            log.warning("could not send %s: %s", what, failure.message)

    async def _delete_session(self) -> None:
        request = self._client.build_request(
            "DELETE",
            self.url,
            headers=self._request_headers(f"{JSON}, {EVENT_STREAM}"),
            timeout=self._request_timeout,
        )
        try:
            response = await self._open(request)
        except Failure as failure:
            log.debug("DELETE of the session failed: %s", failure.message)
            return
        await close(response)
        if response.status_code not in (200, 202, 204, 404, 405):
            log.debug("DELETE of the session answered %d", response.status_code)


@asynccontextmanager
async def open_streamable_http(
    url: str,
    *,
    headers: Mapping[str, str] | None = None,
    auth: httpx.Auth | None = None,
    timeout: float = 30.0,
    sse_read_timeout: float = 300.0,
    http_client: httpx.AsyncClient | None = None,
    max_message_size: int = DEFAULT_MAX_MESSAGE_SIZE,
    max_reconnects: int = 5,
    reconnect_delay: float = 1.0,
    terminate_on_close: bool = True,
    max_requests_in_flight: int = DEFAULT_MAX_REQUESTS_IN_FLIGHT,
) -> AsyncIterator[StreamableHTTPTransport]:
    """A Streamable HTTP transport to the MCP endpoint ``url``, closed when the block ends.

    ``headers`` go with every HTTP request (the transport's own ``Accept``, ``Content-Type``,
    session and version headers win over them); ``auth`` is an ``httpx.Auth`` applied to each
    (an OAuth flow, a bearer token). ``timeout`` bounds connecting, sending and waiting for
    an answer's headers or JSON body; ``sse_read_timeout`` how long an SSE stream may be
    silent. ``max_requests_in_flight`` bounds the requests sent at once (each holds a
    connection until its response came; more wait for a place, pings and other control
    messages do not). ``http_client`` is used instead of a new ``httpx.AsyncClient`` (and then
    not closed here); make it with ``limits=connection_limits(max_requests_in_flight)``, or
    its pool, not this limit, decides when requests and control messages wait.
    ``max_message_size`` limits each received message; ``max_reconnects`` and
    ``reconnect_delay`` (seconds, when the server sent no ``retry:``) govern resuming SSE
    streams; ``terminate_on_close`` sends DELETE for the session at the end. ::

        async with open_streamable_http("http://127.0.0.1:8000/mcp") as transport:
            async with Client().connect(transport) as server:
                await server.list_tools()
    """
    own_client = http_client is None
    client = (
        http_client
        if http_client is not None
        else httpx.AsyncClient(limits=connection_limits(max_requests_in_flight))
    )
    error: BaseException | None = None
    try:
        async with anyio.create_task_group() as tasks:
            transport = StreamableHTTPTransport(
                url,
                client,
                tasks,
                headers=headers,
                auth=auth,
                timeout=timeout,
                sse_read_timeout=sse_read_timeout,
                max_message_size=max_message_size,
                max_reconnects=max_reconnects,
                reconnect_delay=reconnect_delay,
                terminate_on_close=terminate_on_close,
                max_requests_in_flight=max_requests_in_flight,
            )
            try:
                yield transport
            finally:
                await transport.aclose()
    except BaseExceptionGroup as group:
        # The block's own error (a failed call, say) comes out as itself, not in a group (the
        # background tasks never fail). Raised below, outside this handler, so that its own
        # cause and context stay as they were.
        error = only_error(group)
        if error is None:
            raise
    finally:
        if own_client:
            with anyio.CancelScope(shield=True):
                await client.aclose()
    if error is not None:
        raise error
