"""The HTTP+SSE transport of MCP 2024-11-05, client side (on httpx; asyncio and trio).

::

    async with open_legacy_sse("http://127.0.0.1:8000/sse") as transport:
        async with Client().connect(transport) as server:
            await server.list_tools()

:func:`open_legacy_sse` opens the SSE stream with ``GET``, waits for the server's ``endpoint``
event, resolves that URI against the stream's URL (an endpoint on another origin is refused:
messages must not leak elsewhere) and yields a :class:`LegacySSETransport`. ``event: message``
events become what ``receive()`` returns; ``send()`` POSTs each message to the endpoint.

Failures reach the caller rather than hang:

* the stream cannot be opened (non-200, not ``text/event-stream``, no ``endpoint`` event within
  ``timeout``): :class:`LegacySSEError` from :func:`open_legacy_sse`;
* the server closes the stream, or it stays silent for ``sse_read_timeout`` seconds:
  ``receive()`` raises ``anyio.EndOfStream`` (the session ends);
* a POST answered ``404``: the server no longer knows the session; ``send()`` raises
  ``anyio.BrokenResourceError`` and the session ends;
* any other failed POST (an HTTP error status, a network error): for a request, ``send()``
  raises :class:`~mcpbind.protocol.errors.McpError` naming the status and the server's words, which
  the waiting caller receives; a failed notification or response is logged and dropped.

Received events larger than ``max_message_size`` are discarded while they arrive (never held
whole) and reported by ``receive()`` as :class:`~mcpbind.transports.base.MessageTooLarge`.
"""

from __future__ import annotations

import logging
from collections.abc import AsyncIterator, Mapping
from contextlib import asynccontextmanager

import anyio
import anyio.abc
import httpx
import msgspec
from anyio.streams.memory import MemoryObjectReceiveStream, MemoryObjectSendStream

from mcpbind.protocol.errors import INTERNAL_ERROR, McpError
from mcpbind.protocol.peek import Peeked, peek
from mcpbind.transports.base import DEFAULT_MAX_MESSAGE_SIZE, MessageTooLarge
from mcpbind.transports.http.client.auth_time import request_time_limit
from mcpbind.transports.http.client.received import QueuedReceive, Received
from mcpbind.transports.http.client.sse_parse import SSEDecoder, SSEEvent, SSETooLarge

__all__ = ["LegacySSEError", "LegacySSETransport", "open_legacy_sse"]

log = logging.getLogger("mcpbind.http.legacy")


class LegacySSEError(Exception):
    """The SSE stream could not be opened, or its ``endpoint`` event was missing or refused."""

    def __init__(self, message: str, status: int | None = None) -> None:
        super().__init__(message)
        self.status = status


class LegacySSETransport(QueuedReceive):
    """A client's end of an HTTP+SSE session; made by :func:`open_legacy_sse`."""

    # The transport of 2024-11-05: a client connecting over it goes straight to initialize,
    # without probing for the stateless versions (``Client.connect`` reads this).
    handshake_only = True

    def __init__(
        self,
        client: httpx.AsyncClient,
        endpoint: str,
        received: MemoryObjectReceiveStream[Received],
        send_received: MemoryObjectSendStream[Received],
        *,
        headers: Mapping[str, str] | None,
        auth: httpx.Auth | None,
        timeout: float,
    ) -> None:
        self.endpoint = endpoint
        self._client = client
        self._received = received
        self._send_received = send_received
        self._headers = {**(headers or {}), "content-type": "application/json"}
        self._auth = auth
        self._timeout = httpx.Timeout(timeout)
        self._closed = False
        self._gone = anyio.Event()

    async def send(self, message: bytes) -> None:
        if self._closed:
            raise anyio.ClosedResourceError
        if self._gone.is_set():
            raise anyio.BrokenResourceError
        try:
            if self._auth is None:
                response = await self._client.post(
                    self.endpoint, content=message, headers=self._headers, timeout=self._timeout
                )
            else:
                response = await self._client.post(
                    self.endpoint,
                    content=message,
                    headers=self._headers,
                    timeout=self._timeout,
                    auth=self._auth,
                )
        except httpx.HTTPError as exc:
            self._failed(message, f"could not POST the message: {type(exc).__name__}: {exc}")
            return
        status = response.status_code
        if 200 <= status < 300:
            return
        if status == 404:
            log.info("the server no longer knows this session (404 on POST)")
            self._gone.set()
            self._send_received.close()  # receive() ends once what arrived has been read
            raise anyio.BrokenResourceError
        body = response.text[:500].strip()
        self._failed(
            message,
            f"HTTP {status} {httpx.codes.get_reason_phrase(response.status_code)} from {self.endpoint}: {body}",
        )

    def _failed(self, message: bytes, reason: str) -> None:
        try:
            envelope = peek(message)
        except (msgspec.DecodeError, msgspec.ValidationError):
            envelope = Peeked()
        # (A member absent is UNSET here, and ``null`` is no id: a request has both, not null.)
        if envelope.is_request:
            raise McpError(INTERNAL_ERROR, f"Request {envelope.method} failed: {reason}")
        log.warning("message not delivered: %s", reason)

    async def aclose(self) -> None:
        self._closed = True
        self._received.close()
        self._gone.set()


@asynccontextmanager
async def open_legacy_sse(
    url: str,
    *,
    headers: Mapping[str, str] | None = None,
    auth: httpx.Auth | None = None,
    timeout: float = 30.0,
    sse_read_timeout: float = 300.0,
    max_message_size: int = DEFAULT_MAX_MESSAGE_SIZE,
    queue_size: int = 64,
    http_client: httpx.AsyncClient | None = None,
) -> AsyncIterator[LegacySSETransport]:
    """Connect to the SSE endpoint at ``url``; yields the transport, closed when the block ends.

    ``headers`` and ``auth`` go with every request (the stream's GET and each POST).
    ``timeout`` bounds connecting, each POST and the wait for the ``endpoint`` event;
    ``sse_read_timeout`` is how long the stream may stay silent (servers send keep-alive
    comments, every 15 s for ours). Up to ``queue_size`` received messages wait for
    ``receive()``; past that the stream is not read until there is room. An
    ``http_client`` of the caller's is used as it is (its own headers and auth apply too) and
    left open.
    """
    client = http_client if http_client is not None else httpx.AsyncClient()
    request = client.build_request(
        "GET",
        url,
        headers={**(headers or {}), "accept": "text/event-stream", "cache-control": "no-store"},
        timeout=httpx.Timeout(timeout, read=sse_read_timeout),
    )
    send_received, received = anyio.create_memory_object_stream[Received](queue_size)
    try:
        try:
            with anyio.fail_after(request_time_limit(timeout, auth)):
                if auth is None:
                    response = await client.send(request, stream=True)
                else:
                    response = await client.send(request, stream=True, auth=auth)
        except TimeoutError:
            raise LegacySSEError(f"no answer from {url} within {timeout} s") from None
        except httpx.HTTPError as exc:
            raise LegacySSEError(
                f"could not open the SSE stream at {url}: {type(exc).__name__}: {exc}"
            ) from exc
        chunks = response.aiter_bytes()
        try:
            decoder = SSEDecoder(max_message_size)
            endpoint = await _wait_endpoint(url, response, chunks, decoder, send_received, timeout)
            transport = LegacySSETransport(
                client, endpoint, received, send_received, headers=headers, auth=auth, timeout=timeout
            )
            # Entered and left by hand (not ``async with``) so that what the caller's block
            # raises comes out as itself, not inside an exception group.
            tasks = anyio.create_task_group()
            await tasks.__aenter__()
            try:
                tasks.start_soon(
                    _read_stream, chunks, decoder, send_received, name="mcpbind legacy SSE reader"
                )
                yield transport
            finally:
                tasks.cancel_scope.cancel()
                await transport.aclose()
                await tasks.__aexit__(None, None, None)
        finally:
            with anyio.CancelScope(shield=True):
                aclose_chunks = getattr(chunks, "aclose", None)
                if aclose_chunks is not None:
                    await aclose_chunks()
                await response.aclose()
    finally:
        send_received.close()
        received.close()
        if http_client is None:
            with anyio.CancelScope(shield=True):
                await client.aclose()


async def _wait_endpoint(
    url: str,
    response: httpx.Response,
    chunks: AsyncIterator[bytes],
    decoder: SSEDecoder,
    queue: MemoryObjectSendStream[Received],
    timeout: float,
) -> str:
    """Check the response, read events up to ``endpoint``; its URI, resolved against ``url``."""
    if response.status_code != 200:
        await response.aread()
        body = response.text[:500].strip()
        raise LegacySSEError(
            f"GET {url} answered HTTP {response.status_code} {httpx.codes.get_reason_phrase(response.status_code)}: {body}",
            response.status_code,
        )
    content_type = response.headers.get("content-type", "").partition(";")[0].strip().lower()
    if content_type != "text/event-stream":
        raise LegacySSEError(f"GET {url} answered {content_type or 'no content type'}, not text/event-stream")
    try:
        with anyio.fail_after(timeout):
            async for chunk in chunks:
                endpoint: str | None = None
                for event in decoder.feed(chunk):
                    if endpoint is None and isinstance(event, SSEEvent) and event.type == "endpoint":
                        endpoint = _resolve_endpoint(url, event.data.decode("utf-8", "replace").strip())
                        continue
                    item = _received(event, decoder)
                    if item is None:
                        continue
                    # A message before the endpoint is out of order, but not worth losing (and
                    # those after it in the same chunk are in order). The queue has room for
                    # as many as it holds; past that the server is misbehaving.
                    try:
                        queue.send_nowait(item)
                    except anyio.WouldBlock:
                        raise LegacySSEError("too many messages before the endpoint event") from None
                if endpoint is not None:
                    return endpoint
    except TimeoutError:
        raise LegacySSEError(f"no endpoint event from {url} within {timeout} s") from None
    except httpx.HTTPError as exc:
        raise LegacySSEError(f"the SSE stream from {url} failed: {type(exc).__name__}: {exc}") from exc
    raise LegacySSEError(f"the SSE stream from {url} ended before its endpoint event")


def _received(event: SSEEvent | SSETooLarge, decoder: SSEDecoder) -> Received | None:
    """What ``receive()`` gets for an event: a message's data, or the notice of an oversized
    one; ``None`` for other event types, which this transport ignores."""
    if isinstance(event, SSETooLarge):
        return MessageTooLarge(event.size, decoder.max_event_size)
    if event.type == "message":
        return event.data
    log.debug("ignoring an SSE event of type %r", event.type)
    return None


def _resolve_endpoint(url: str, data: str) -> str:
    base = httpx.URL(url)
    try:
        endpoint = base.join(data)
    except httpx.InvalidURL as exc:
        raise LegacySSEError(f"the endpoint event holds an invalid URI: {data!r}") from exc
    if (endpoint.scheme, endpoint.host, endpoint.port) != (base.scheme, base.host, base.port):
        raise LegacySSEError(f"refusing the endpoint {str(endpoint)!r}: it is not on the origin of {url!r}")
    return str(endpoint)


async def _read_stream(
    chunks: AsyncIterator[bytes], decoder: SSEDecoder, queue: MemoryObjectSendStream[Received]
) -> None:
    # Event ids and retry delays mean nothing in this transport (it never resumes a stream).
    try:
        async for chunk in chunks:
            for event in decoder.feed(chunk):
                item = _received(event, decoder)
                if item is not None:
                    await queue.send(item)
        log.info("the server closed the SSE stream")
    except httpx.HTTPError as exc:
        log.info("the SSE stream failed: %s: %s", type(exc).__name__, exc)
    except (anyio.BrokenResourceError, anyio.ClosedResourceError):
        pass  # closed on our side
    except Exception:
        log.exception("reading the SSE stream failed")
    finally:
        queue.close()
