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

SSE is parsed here rather than with httpx-sse, whose decoder holds a whole line or event in
memory however large it grows: :class:`SSEDecoder` works on bytes (no text round trip for the
message payloads) and drops oversized events while they arrive. It lives in
:mod:`mcpbind.transports.http.sse_parse` (shared with the legacy client) and is importable from here too.
"""

from __future__ import annotations

import logging
import sys
from collections.abc import AsyncIterator, Awaitable, Callable, Mapping
from contextlib import asynccontextmanager
from dataclasses import dataclass
from typing import Any

import anyio
import anyio.abc
import httpx
import msgspec
from anyio.streams.memory import MemoryObjectSendStream
from msgspec import UNSET, Raw, UnsetType

from mcpbind.protocol.errors import CONNECTION_CLOSED, INTERNAL_ERROR, REQUEST_TIMEOUT
from mcpbind.protocol.wire import Codec, RequestId, salvage_id
from mcpbind.runtime.exception_groups import only_error
from mcpbind.transports.base import DEFAULT_MAX_MESSAGE_SIZE, MessageTooLarge
from mcpbind.transports.http._common import QueuedReceive, Received
from mcpbind.transports.http.sse_parse import SSEDecoder, SSEEvent, SSETooLarge

if sys.version_info < (3, 11):  # pragma: no cover
    from exceptiongroup import BaseExceptionGroup

__all__ = [
    "CONTROL_CONNECTIONS",
    "DEFAULT_MAX_REQUESTS_IN_FLIGHT",
    "HTTPTransportError",
    "SSEDecoder",
    "SSEEvent",
    "SSETooLarge",
    "StreamableHTTPTransport",
    "connection_limits",
    "open_streamable_http",
]

log = logging.getLogger("mcpbind.http.client")

SESSION_HEADER = "mcp-session-id"
VERSION_HEADER = "mcp-protocol-version"
LAST_EVENT_ID_HEADER = "last-event-id"
JSON = "application/json"
EVENT_STREAM = "text/event-stream"

# How much of an error body is kept for the error message and HTTPTransportError.
_ERROR_BODY_LIMIT = 4096
# Messages waiting for receive(); the background streams wait while this many are queued.
_QUEUE_SIZE = 1024


# How long opening the GET stream may hold up the send of notifications/initialized.
_GET_OPEN_WAIT = 1.0

DEFAULT_MAX_REQUESTS_IN_FLIGHT = 256
"""How many requests a :class:`StreamableHTTPTransport` has in flight at most, by default."""

CONTROL_CONNECTIONS = 8
"""Connections kept for pings, notifications and responses, which never wait behind requests."""

# Connections kept for the GET stream (and one replacing it, or the DELETE at the end).
_SESSION_CONNECTIONS = 2


def connection_limits(max_requests_in_flight: int = DEFAULT_MAX_REQUESTS_IN_FLIGHT) -> httpx.Limits:
    """The connection pool a Streamable HTTP transport with ``max_requests_in_flight`` needs:
    one connection per request in flight, :data:`CONTROL_CONNECTIONS` for control messages and
    two for the GET stream, all kept alive between uses. For an ``httpx.AsyncClient`` of your
    own: ``httpx.AsyncClient(limits=connection_limits(n))`` with ``max_requests_in_flight=n``.
    """
    if max_requests_in_flight < 1:
        raise ValueError("max_requests_in_flight must be at least 1")
    total = max_requests_in_flight + CONTROL_CONNECTIONS + _SESSION_CONNECTIONS
    return httpx.Limits(max_connections=total, max_keepalive_connections=total)


class HTTPTransportError(Exception):
    """The first initialize POST got an HTTP 4xx status: probably no Streamable HTTP server.

    Raised from ``send()`` (and so out of ``Client.connect``), so that a caller can try the
    legacy HTTP+SSE transport on 400, 404 or 405 as the spec's backward compatibility section
    describes. ``body`` is the start of the response body, decoded leniently.
    """

    def __init__(self, status: int, body: str) -> None:
        reason = httpx.codes.get_reason_phrase(status)
        super().__init__(f"HTTP {status} {reason}: {body}" if body else f"HTTP {status} {reason}")
        self.status = status
        self.body = body


# --------------------------------------------------------------------------------------------
# Looking into messages (only as far as routing needs)
# --------------------------------------------------------------------------------------------


class _Envelope(msgspec.Struct):
    """What a message is: a request (id and method), a notification (method), a response."""

    id: RequestId | UnsetType | None = UNSET
    method: str | UnsetType = UNSET


class _InitializeAnswer(msgspec.Struct):
    id: RequestId | UnsetType | None = UNSET
    result: _InitializeResultVersion | UnsetType = UNSET


class _InitializeResultVersion(msgspec.Struct):
    protocolVersion: str | UnsetType = UNSET


class _CancelledParams(msgspec.Struct):
    requestId: RequestId | UnsetType = UNSET


class _Cancelled(msgspec.Struct):
    """Which request a ``notifications/cancelled`` names."""

    params: _CancelledParams | UnsetType = UNSET


_envelope = msgspec.json.Decoder(_Envelope)
_cancelled = msgspec.json.Decoder(_Cancelled)
_envelopes = msgspec.json.Decoder(list[Raw])
_initialize_answer = msgspec.json.Decoder(_InitializeAnswer)


def _split(data: bytes) -> list[bytes]:
    """A JSON-RPC batch (a JSON array) into its messages; anything else as it is."""
    if data.lstrip()[:1] == b"[":
        try:
            return [bytes(item) for item in _envelopes.decode(data)]
        except (msgspec.DecodeError, RecursionError):
            pass
    return [data]


def _cancelled_request(data: bytes) -> RequestId | None:
    """The request a ``notifications/cancelled`` message names, if it names one."""
    try:
        params = _cancelled.decode(data).params
    except (msgspec.DecodeError, msgspec.ValidationError):
        return None
    if isinstance(params, UnsetType) or isinstance(params.requestId, UnsetType):
        return None
    return params.requestId


def _peek(data: bytes) -> _Envelope | None:
    try:
        return _envelope.decode(data)
    except (msgspec.DecodeError, msgspec.ValidationError, RecursionError):
        pass
    # A response that does not decode (nested too deeply, a lone surrogate) still names the
    # request it answers when its id can be read: delivered, it fails that request at once.
    salvaged = salvage_id(data)
    return _Envelope(id=salvaged.id) if salvaged.response and salvaged.id is not None else None


def _is_response_to(envelope: _Envelope | None, ident: RequestId) -> bool:
    return (
        envelope is not None
        and isinstance(envelope.method, UnsetType)
        and envelope.id == ident
        and type(envelope.id) is type(ident)
    )


def _media_type(response: httpx.Response) -> str:
    value: str = response.headers.get("content-type", "")
    return value.partition(";")[0].strip().lower()


def _valid_session_id(value: str) -> bool:
    return bool(value) and all(0x21 <= ord(c) <= 0x7E for c in value)


class _Failure(Exception):
    """Why a request could not be completed: becomes its JSON-RPC error response."""

    def __init__(self, code: int, message: str, status: int | None = None, body: str | None = None) -> None:
        super().__init__(message)
        self.code = code
        self.message = message
        self.status = status
        self.body = body

    def data(self) -> Any:
        if self.status is None:
            return UNSET
        return {"status": self.status, "body": self.body or ""}


async def _read_body(response: httpx.Response, limit: int) -> bytes | None:
    """The whole body, or ``None`` as soon as it is known to exceed ``limit`` bytes."""
    declared = response.headers.get("content-length")
    if declared is not None and _too_large(declared, limit):
        return None
    chunks: list[bytes] = []
    size = 0
    async for chunk in response.aiter_bytes():
        size += len(chunk)
        if size > limit:
            return None
        chunks.append(chunk)
    return b"".join(chunks)


def _too_large(content_length: str, limit: int) -> bool:
    """Whether a Content-Length value (ASCII digits, else ignored) is over ``limit``."""
    if not content_length.isascii() or not content_length.isdigit():
        return False  # ("²".isdigit() is true, and int() refuses it)
    return len(content_length) > 18 or int(content_length) > limit  # (int() refuses 4,301 digits)


async def _error_body(response: httpx.Response) -> str:
    """The start of an error response's body, for messages; never raises."""
    try:
        chunks: list[bytes] = []
        size = 0
        async for chunk in response.aiter_bytes():
            chunks.append(chunk)
            size += len(chunk)
            if size >= _ERROR_BODY_LIMIT:
                break
        return b"".join(chunks)[:_ERROR_BODY_LIMIT].decode("utf-8", "replace").strip()
    except httpx.HTTPError:
        return ""


async def _close(response: httpx.Response) -> None:
    with anyio.CancelScope(shield=True):
        try:
            await response.aclose()
        except httpx.HTTPError:
            pass


class _Place:
    """A message's place in its lane (requests, or control messages): taken before its HTTP
    request is sent, given back once its exchange is over (for a request answered with a
    stream, when the stream ends). Giving it back twice gives it back once."""

    __slots__ = ("held", "lane", "streaming")

    def __init__(self, lane: anyio.Semaphore) -> None:
        self.lane = lane
        self.held = False
        self.streaming = False  # handed over to the task that reads the request's stream

    async def take(self) -> None:
        try:
            self.lane.acquire_nowait()  # no trip through the event loop while there is room
        except anyio.WouldBlock:
            await self.lane.acquire()
        self.held = True

    def give_back(self) -> None:
        if self.held:
            self.held = False
            self.lane.release()


@dataclass
class _StreamPosition:
    """Where an SSE stream stands, across its reconnections."""

    request_id: RequestId | None  # the POST's request; None for the GET stream
    last_event_id: str | None = None
    retry: float | None = None  # seconds, from the server's last retry: field
    answered: bool = False


# --------------------------------------------------------------------------------------------
# The transport
# --------------------------------------------------------------------------------------------


class StreamableHTTPTransport(QueuedReceive):
    """A :class:`~mcpbind.transports.base.Transport` to one Streamable HTTP MCP endpoint.

    Made by :func:`open_streamable_http`, which owns its background tasks and HTTP client.
    ``related`` and ``final`` of ``send()`` are not needed on this side and ignored.
    ``send()`` of a request waits while ``max_requests_in_flight`` requests are in flight
    (a ping excepted: it goes with the control messages).
    """

    def __init__(
        self,
        url: str,
        http_client: httpx.AsyncClient,
        task_group: anyio.abc.TaskGroup,
        *,
        headers: Mapping[str, str] | None = None,
        auth: httpx.Auth | None = None,
        timeout: float = 30.0,
        sse_read_timeout: float = 300.0,
        max_message_size: int = DEFAULT_MAX_MESSAGE_SIZE,
        max_reconnects: int = 5,
        reconnect_delay: float = 1.0,
        terminate_on_close: bool = True,
        max_requests_in_flight: int = DEFAULT_MAX_REQUESTS_IN_FLIGHT,
    ) -> None:
        if max_message_size < 1:
            raise ValueError("max_message_size must be at least 1")
        if max_requests_in_flight < 1:
            raise ValueError("max_requests_in_flight must be at least 1")
        if max_reconnects < 0:
            raise ValueError("max_reconnects must not be negative")
        self.url = url
        self.max_message_size = max_message_size
        self.max_reconnects = max_reconnects
        self.reconnect_delay = reconnect_delay
        self.terminate_on_close = terminate_on_close
        self.max_requests_in_flight = max_requests_in_flight
        # The two lanes (see the module's docstring): requests, and everything else.
        self._requests = anyio.Semaphore(max_requests_in_flight)
        self._control = anyio.Semaphore(CONTROL_CONNECTIONS)
        # The tasks reading the streams of requests, by request id: sending
        # notifications/cancelled for one stops its task.
        self._request_streams: dict[RequestId, anyio.CancelScope] = {}
        self._client = http_client
        self._tasks = task_group
        self._headers = dict(headers or {})
        self._auth = auth
        self._timeout = timeout
        self._request_timeout = httpx.Timeout(timeout)
        self._stream_timeout = httpx.Timeout(timeout, read=sse_read_timeout)
        self._incoming_send: MemoryObjectSendStream[bytes | MessageTooLarge]
        self._incoming_send, self._received = anyio.create_memory_object_stream[Received](_QUEUE_SIZE)
        self._closed = False
        self._scopes: set[anyio.CancelScope] = set()
        self._get_stream: anyio.CancelScope | None = None
        self._renewing = anyio.Lock()
        # The client's initialize request, sent again to start a new session after a 404.
        self._initialize_message: bytes | None = None
        self._initialize_id: RequestId | None = None
        self._initialized_message: bytes | None = None
        self._renewals = 0
        self.session_id: str | None = None
        """The ``Mcp-Session-Id`` the server assigned (``None``: it uses no sessions)."""
        self.protocol_version: str | None = None
        """The negotiated protocol version, sent as ``MCP-Protocol-Version`` once known."""
        self.initialize_status: int | None = None
        """The HTTP status the initialize POST got (``None`` until it got one)."""

    # -- Transport --------------------------------------------------------------------------

    async def send(self, message: bytes) -> None:
        if self._closed:
            raise anyio.ClosedResourceError
        envelope = _peek(message)
        if envelope is None:
            raise ValueError("not a JSON-RPC message")
        if envelope.method == "initialize" and self._initialize_message is None:
            self._initialize_message = message
            self._initialize_id = envelope.id if isinstance(envelope.id, int | str) else None
        elif envelope.method == "notifications/initialized":
            self._initialized_message = message
        elif envelope.method == "notifications/cancelled":
            # Delivered in the background: the caller (a cancelled request) waits for it only
            # briefly, and it may have to wait for a place behind other control messages.
            self._tasks.start_soon(self._background, self._cancel, message, envelope)
            return
        is_request = isinstance(envelope.method, str) and isinstance(envelope.id, int | str)
        place = _Place(self._requests if is_request and envelope.method != "ping" else self._control)
        await place.take()
        try:
            await self._post(message, envelope, place, may_renew=True)
        except _Failure as failure:
            await self._fail(envelope, failure)
        finally:
            if not place.streaming:
                place.give_back()

    async def _cancel(self, message: bytes, envelope: _Envelope) -> None:
        """Send ``notifications/cancelled``; then stop reading (or resuming) the stream of the
        request it names, which frees its connection and its place: no response is coming."""
        place = _Place(self._control)
        try:
            await place.take()
            await self._post(message, envelope, place, may_renew=True)
        except _Failure as failure:
            await self._fail(envelope, failure)
        finally:
            place.give_back()
            ident = _cancelled_request(message)
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

    # -- HTTP requests ----------------------------------------------------------------------

    def _request_headers(self, accept: str, *, initialize: bool = False) -> dict[str, str]:
        headers = dict(self._headers)
        headers["accept"] = accept
        if not initialize:
            if self.session_id is not None:
                headers[SESSION_HEADER] = self.session_id
            if self.protocol_version is not None:
                headers[VERSION_HEADER] = self.protocol_version
        return headers

    async def _open(self, request: httpx.Request) -> httpx.Response:
        """Send ``request``; the response with its body still unread (close it)."""
        what = f"{request.method} {request.url}"
        try:
            with anyio.fail_after(self._timeout):
                return await self._client.send(
                    request,
                    stream=True,
                    auth=self._auth if self._auth is not None else httpx.USE_CLIENT_DEFAULT,
                )
        except TimeoutError:
            raise _Failure(REQUEST_TIMEOUT, f"{what}: no response within {self._timeout} s") from None
        except httpx.TimeoutException as exc:
            raise _Failure(REQUEST_TIMEOUT, f"{what} timed out: {exc!r}") from None
        except httpx.HTTPError as exc:
            raise _Failure(CONNECTION_CLOSED, f"{what} failed: {exc!r}") from None

    async def _post(self, message: bytes, envelope: _Envelope, place: _Place, *, may_renew: bool) -> None:
        """POST one message and route what comes back. Raises :class:`_Failure`. A request's
        stream is read in the background, which gives ``place`` back when it ends."""
        is_initialize = envelope.method == "initialize"
        headers = self._request_headers(f"{JSON}, {EVENT_STREAM}", initialize=is_initialize)
        headers["content-type"] = JSON
        sent_session = None if is_initialize else self.session_id
        request = self._client.build_request(
            "POST", self.url, content=message, headers=headers, timeout=self._stream_timeout
        )
        response = await self._open(request)
        handed_over = False
        try:
            status = response.status_code
            if is_initialize:
                self.initialize_status = status
            if status == 404 and sent_session is not None:
                await _close(response)
                if not may_renew:
                    raise _Failure(
                        CONNECTION_CLOSED,
                        f"HTTP 404 again in the new session ({SESSION_HEADER} {sent_session})",
                        404,
                    )
                if await self._renew_session(sent_session):
                    if envelope.method != "notifications/initialized":  # the renewal sent it
                        await self._post(message, envelope, place, may_renew=False)
                    return
                raise _Failure(
                    CONNECTION_CLOSED,
                    f"The server ended the session ({SESSION_HEADER} {sent_session}) and a new one "
                    "could not be started",
                    404,
                )
            if not 200 <= status < 300:
                body = await _error_body(response)
                if is_initialize and 400 <= status < 500:
                    raise HTTPTransportError(status, body)
                raise _Failure(
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
            media = _media_type(response)
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
                body = await _error_body(response)
                raise _Failure(
                    INTERNAL_ERROR,
                    f"HTTP {status} from POST {self.url} with content type {media or 'none'!r} "
                    f"instead of {JSON} or {EVENT_STREAM}; no response to request {ident!r}",
                    status,
                    body,
                )
        except httpx.HTTPError as exc:
            raise _Failure(CONNECTION_CLOSED, f"POST {self.url} failed while reading: {exc!r}") from None
        finally:
            if not handed_over:
                await _close(response)

    def _learn_session(self, response: httpx.Response) -> None:
        value = response.headers.get(SESSION_HEADER)
        if value is None:
            self.session_id = None
            return
        if not _valid_session_id(value):
            raise _Failure(
                INTERNAL_ERROR, f"The server sent an invalid {SESSION_HEADER} header: {value[:100]!r}"
            )
        self.session_id = value

    async def _deliver_json(self, response: httpx.Response, ident: RequestId) -> None:
        try:
            with anyio.fail_after(self._timeout):
                body = await _read_body(response, self.max_message_size)
        except TimeoutError:
            raise _Failure(
                REQUEST_TIMEOUT, f"The JSON answer to request {ident!r} took over {self._timeout} s to arrive"
            ) from None
        if body is None:
            raise _Failure(
                INTERNAL_ERROR,
                f"The response to request {ident!r} exceeds the limit of {self.max_message_size} bytes",
            )
        messages = _split(body)
        peeked = [_peek(item) for item in messages]
        if any(item is None for item in peeked):
            raise _Failure(
                INTERNAL_ERROR,
                f"POST {self.url} answered with a body that is not a JSON-RPC message: "
                f"{body[:200].decode('utf-8', 'replace')!r}",
                response.status_code,
                body[:_ERROR_BODY_LIMIT].decode("utf-8", "replace"),
            )
        if not any(_is_response_to(item, ident) for item in peeked):
            raise _Failure(
                INTERNAL_ERROR,
                f"POST {self.url} answered with JSON that holds no response to request {ident!r}",
            )
        for item, envelope in zip(messages, peeked, strict=True):
            await self._deliver(item, envelope)

    async def _deliver(self, message: bytes, envelope: _Envelope | None = None) -> None:
        """Queue one message for ``receive()``, noting the negotiated version on the way."""
        if self._initialize_id is not None and self.protocol_version is None:
            envelope = envelope or _peek(message)
            if _is_response_to(envelope, self._initialize_id):
                self._learn_version(message)
        try:
            await self._incoming_send.send(message)
        except (anyio.ClosedResourceError, anyio.BrokenResourceError):
            pass

    def _learn_version(self, message: bytes) -> None:
        try:
            answer = _initialize_answer.decode(message)
        except (msgspec.DecodeError, msgspec.ValidationError):
            return
        if not isinstance(answer.result, UnsetType) and isinstance(answer.result.protocolVersion, str):
            self.protocol_version = answer.result.protocolVersion

    async def _fail(self, envelope: _Envelope, failure: _Failure) -> None:
        """A request gets an error response made here; anything else is only logged."""
        if isinstance(envelope.method, str) and isinstance(envelope.id, int | str):
            await self._fail_request(envelope.id, failure)
        else:
            what = envelope.method if isinstance(envelope.method, str) else f"response to {envelope.id!r}"
            log.warning("could not send %s: %s", what, failure.message)

    async def _fail_request(self, ident: RequestId, failure: _Failure) -> None:
        log.debug("request %r failed: %s", ident, failure.message)
        error = Codec.encode_error(ident, failure.code, failure.message, failure.data())
        try:
            await self._incoming_send.send(error)
        except (anyio.ClosedResourceError, anyio.BrokenResourceError):
            pass

    async def _delete_session(self) -> None:
        request = self._client.build_request(
            "DELETE",
            self.url,
            headers=self._request_headers(f"{JSON}, {EVENT_STREAM}"),
            timeout=self._request_timeout,
        )
        try:
            response = await self._open(request)
        except _Failure as failure:
            log.debug("DELETE of the session failed: %s", failure.message)
            return
        await _close(response)
        if response.status_code not in (200, 202, 204, 404, 405):
            log.debug("DELETE of the session answered %d", response.status_code)

    # -- background streams -----------------------------------------------------------------

    async def _background(
        self,
        run: Callable[..., Awaitable[None]],
        *args: Any,
        task_status: anyio.abc.TaskStatus[None] = anyio.TASK_STATUS_IGNORED,
    ) -> None:
        """Run ``run(*args)`` until it ends or the transport closes; never raises."""
        scope = anyio.CancelScope()
        self._scopes.add(scope)
        if self._closed:
            scope.cancel()
        try:
            with scope:
                task_status.started()
                await run(*args)
        except Exception:
            log.exception("a background HTTP stream failed")
        finally:
            self._scopes.discard(scope)

    async def _post_stream(self, response: httpx.Response, ident: RequestId, place: _Place) -> None:
        """The SSE answer to request ``ident``: read it, resume it until the response came
        (or the request was cancelled); then give the request's place back."""
        scope = anyio.CancelScope()
        self._request_streams[ident] = scope
        try:
            with scope:
                position = _StreamPosition(ident)
                try:
                    failure = await self._follow(position, response)
                finally:
                    await _close(response)
                if failure is None:
                    failure = await self._resume(position)
                if failure is not None and not position.answered:
                    await self._fail_request(ident, failure)
        finally:
            if self._request_streams.get(ident) is scope:
                del self._request_streams[ident]
            place.give_back()

    async def _open_get_stream(self) -> None:
        """Open the GET stream in the background, and wait (up to ``_GET_OPEN_WAIT`` seconds)
        until the server has answered its GET: requests sent after this then reach the server
        after the GET, in the order a client's listener is expected (a server may take a GET
        that comes later for a reconnection)."""
        if self._get_stream is not None:
            self._get_stream.cancel()
        scope = anyio.CancelScope()
        self._get_stream = scope
        opened = anyio.Event()
        self._tasks.start_soon(self._background, self._get_stream_task, scope, opened)
        with anyio.move_on_after(_GET_OPEN_WAIT):
            await opened.wait()

    async def _get_stream_task(self, scope: anyio.CancelScope, opened: anyio.Event) -> None:
        try:
            with scope:
                failure = await self._resume(_StreamPosition(None), connect_at_once=True, opened=opened)
                if failure is not None:
                    log.debug("GET stream ended: %s", failure.message)
        finally:
            opened.set()

    async def _resume(
        self, position: _StreamPosition, *, connect_at_once: bool = False, opened: anyio.Event | None = None
    ) -> _Failure | None:
        """Reconnect with GET (carrying ``Last-Event-ID`` where known) until the stream is done.

        A request's stream is done once its response came: then this returns ``None``. The GET
        stream is never done; it ends with the transport or when the server refuses it. Each
        attempt waits the server's ``retry:`` delay first (except the GET stream's first,
        with ``connect_at_once``); attempts that deliver nothing count toward
        ``max_reconnects``. Returns why it gave up.
        """
        ident = position.request_id
        what = "GET stream" if ident is None else f"stream of request {ident!r}"
        attempts = 0
        wait = not connect_at_once
        while not position.answered and not self._closed:
            if ident is not None and position.last_event_id is None:
                return _Failure(
                    CONNECTION_CLOSED,
                    f"The {what} ended before its response and cannot be resumed (no event id)",
                )
            if wait:
                if attempts >= self.max_reconnects:
                    return _Failure(
                        CONNECTION_CLOSED, f"The {what} ended; gave up after {attempts} reconnections"
                    )
                attempts += 1
                await anyio.sleep(position.retry if position.retry is not None else self.reconnect_delay)
            wait = True
            headers = self._request_headers(EVENT_STREAM)
            headers["cache-control"] = "no-store"
            if position.last_event_id is not None:
                headers[LAST_EVENT_ID_HEADER] = position.last_event_id
            sent_session = self.session_id
            request = self._client.build_request(
                "GET", self.url, headers=headers, timeout=self._stream_timeout
            )
            try:
                response = await self._open(request)
            except _Failure as failure:
                log.debug("connecting the %s failed: %s", what, failure.message)
                continue
            finally:
                if opened is not None:
                    opened.set()  # the server has answered (or the attempt failed)
            try:
                status, media = response.status_code, _media_type(response)
                if status == 405:
                    return _Failure(
                        CONNECTION_CLOSED, f"The server offers no GET stream (HTTP 405) for the {what}", 405
                    )
                if status == 404 and sent_session is not None:
                    return _Failure(
                        CONNECTION_CLOSED,
                        f"The server ended the session ({SESSION_HEADER} {sent_session}); the {what} is lost",
                        404,
                    )
                if status != 200 or media != EVENT_STREAM:
                    body = await _error_body(response)
                    return _Failure(
                        INTERNAL_ERROR,
                        f"GET {self.url} for the {what} answered HTTP {status} ({media or 'no content type'})"
                        + (f": {body}" if body else ""),
                        status,
                        body,
                    )
                if await self._read_events(position, response):
                    attempts = 0
            finally:
                await _close(response)
        return None

    async def _follow(self, position: _StreamPosition, response: httpx.Response) -> _Failure | None:
        """Read the POST's own stream; a failure only if it must not be resumed."""
        try:
            await self._read_events(position, response)
        except _Failure as failure:
            return failure
        return None

    async def _read_events(self, position: _StreamPosition, response: httpx.Response) -> bool:
        """Deliver the stream's messages until it ends, drops or brings the awaited response.

        Returns whether any event arrived. Raises :class:`_Failure` for an oversized message
        on a request's stream: that fails the request rather than let it wait for ever.
        """
        decoder = SSEDecoder(self.max_message_size)
        got_events = False
        ident = position.request_id
        try:
            async for chunk in response.aiter_raw():
                events = decoder.feed(chunk)
                if decoder.last_event_id is not None:
                    position.last_event_id = decoder.last_event_id
                if decoder.retry is not None:
                    position.retry = decoder.retry / 1000
                for event in events:
                    got_events = True
                    if isinstance(event, SSETooLarge):
                        if ident is not None:
                            raise _Failure(
                                INTERNAL_ERROR,
                                f"A message of {event.size} bytes or more on the stream of request "
                                f"{ident!r} exceeds the limit of {self.max_message_size} bytes",
                            )
                        await self._queue_error(MessageTooLarge(event.size, self.max_message_size))
                        continue
                    if event.type != "message" or not event.data.strip():
                        continue  # another kind of event, or a priming event (no message)
                    for message in _split(event.data):
                        envelope = _peek(message)
                        await self._deliver(message, envelope)
                        if ident is not None and _is_response_to(envelope, ident):
                            position.answered = True
                    if position.answered:
                        return True
        except httpx.HTTPError as exc:
            log.debug("SSE stream dropped: %r", exc)
        return got_events

    async def _queue_error(self, error: MessageTooLarge) -> None:
        try:
            await self._incoming_send.send(error)
        except (anyio.ClosedResourceError, anyio.BrokenResourceError):
            pass

    # -- session renewal --------------------------------------------------------------------

    async def _renew_session(self, expired: str) -> bool:
        """Start a new session after ``expired`` got 404; whether there is one now."""
        async with self._renewing:
            if self.session_id != expired:  # renewed (or failed to) while this one waited
                return self.session_id is not None
            if self._initialize_message is None or self._initialized_message is None:
                return False
            self._renewals += 1
            if self._get_stream is not None:
                self._get_stream.cancel()
                self._get_stream = None
            try:
                await self._initialize_again(self._initialize_message)
            except (_Failure, HTTPTransportError, httpx.HTTPError, msgspec.MsgspecError) as exc:
                log.warning("could not start a new session after %s expired: %s", expired, exc)
                return False
            log.info("session %s expired; continuing in session %s", expired, self.session_id)
            return True

    async def _initialize_again(self, original: bytes) -> None:
        try:
            params = msgspec.json.decode(original)
        except msgspec.DecodeError as exc:  # we stored what was sent: cannot happen
            raise _Failure(INTERNAL_ERROR, "the initialize request cannot be sent again") from exc
        ident = f"mcpbind-renewal-{self._renewals}"
        params["id"] = ident
        message = msgspec.json.encode(params)
        headers = self._request_headers(f"{JSON}, {EVENT_STREAM}", initialize=True)
        headers["content-type"] = JSON
        request = self._client.build_request(
            "POST", self.url, content=message, headers=headers, timeout=self._stream_timeout
        )
        self.session_id = None
        response = await self._open(request)
        try:
            if response.status_code != 200:
                raise _Failure(INTERNAL_ERROR, f"initialize answered HTTP {response.status_code}")
            self._learn_session(response)
            answer = await self._private_answer(response, ident)
        finally:
            await _close(response)
        self._learn_version(answer)
        initialized = self._initialized_message or Codec.encode_notification("notifications/initialized")
        headers = self._request_headers(f"{JSON}, {EVENT_STREAM}")
        headers["content-type"] = JSON
        request = self._client.build_request(
            "POST", self.url, content=initialized, headers=headers, timeout=self._request_timeout
        )
        response = await self._open(request)
        await _close(response)
        if not 200 <= response.status_code < 300:
            raise _Failure(INTERNAL_ERROR, f"notifications/initialized answered HTTP {response.status_code}")
        await self._open_get_stream()

    async def _private_answer(self, response: httpx.Response, ident: str) -> bytes:
        """The response to our own initialize: read here, never delivered."""
        media = _media_type(response)
        if media == JSON:
            body = await _read_body(response, self.max_message_size)
            candidates = _split(body) if body is not None else []
        elif media == EVENT_STREAM:
            candidates = []
            decoder = SSEDecoder(self.max_message_size)
            async for chunk in response.aiter_raw():
                for event in decoder.feed(chunk):
                    if isinstance(event, SSEEvent) and event.type == "message":
                        candidates.extend(_split(event.data))
                if any(_is_response_to(_peek(item), ident) for item in candidates):
                    break
        else:
            raise _Failure(INTERNAL_ERROR, f"initialize answered with content type {media!r}")
        for item in candidates:
            if _is_response_to(_peek(item), ident):
                answer = _initialize_answer.decode(item)
                if isinstance(answer.result, UnsetType):
                    raise _Failure(INTERNAL_ERROR, f"initialize failed: {item[:200]!r}")
                return item
        raise _Failure(INTERNAL_ERROR, "no answer to initialize")


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
            async with Client().connect(transport) as session:
                await session.list_tools()
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
