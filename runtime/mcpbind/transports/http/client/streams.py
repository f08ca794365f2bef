"""The Streamable HTTP client's SSE streams: the stream a POST answers a request with, the GET
stream for messages unrelated to any request, and resuming either with ``Last-Event-ID``
after it drops.

Every event with data is a message and goes to ``receive()``; an event without data (the
priming event) only moves the stream's position. A request's stream that ends before its
response came is resumed with a GET carrying ``Last-Event-ID``, after the delay of the
server's ``retry:`` field (``reconnect_delay`` when it sent none), up to ``max_reconnects``
times in a row (an attempt that delivers events resets the count). The GET stream is opened
once the server has accepted ``notifications/initialized``, and resumed the same way when it
drops. An oversized event fails the request whose stream it is on; on the GET stream
``receive()`` raises :class:`~mcpbind.transports.base.MessageTooLarge` for it.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass

import anyio
import httpx

from mcpbind.protocol.errors import CONNECTION_CLOSED, INTERNAL_ERROR
from mcpbind.protocol.jsonrpc import RequestId
from mcpbind.transports.base import MessageTooLarge
from mcpbind.transports.http.client.core import EVENT_STREAM, SESSION_HEADER, TransportCore
from mcpbind.transports.http.client.errors import Failure
from mcpbind.transports.http.client.lanes import Place
from mcpbind.transports.http.client.messages import is_response_to, peek_message, split
from mcpbind.transports.http.client.responses import close, error_body, media_type
from mcpbind.transports.http.client.sse_parse import SSEDecoder, SSETooLarge

__all__ = ["SSEStreams", "StreamPosition"]

log = logging.getLogger("mcpbind.http.client")

LAST_EVENT_ID_HEADER = "last-event-id"

# How long opening the GET stream may hold up the send of notifications/initialized.
_GET_OPEN_WAIT = 1.0


@dataclass
class StreamPosition:
    """Where an SSE stream stands, across its reconnections."""

    request_id: RequestId | None  # the POST's request; None for the GET stream
    last_event_id: str | None = None
    retry: float | None = None  # seconds, from the server's last retry: field
    answered: bool = False


class SSEStreams(TransportCore):
    """Reading and resuming the SSE streams of a Streamable HTTP client transport."""

    async def _post_stream(self, response: httpx.Response, ident: RequestId, place: Place) -> None:
        """The SSE answer to request ``ident``: read it, resume it until the response came
        (or the request was cancelled); then give the request's place back."""
        scope = anyio.CancelScope()
        self._request_streams[ident] = scope
        try:
            with scope:
                position = StreamPosition(ident)
                try:
                    failure = await self._follow(position, response)
                finally:
                    await close(response)
                if failure is None:
                    failure = await self._resume(position)
                if failure is not None and not position.answered:
                    await self._fail_request(ident, failure)
        finally:
            if self._request_streams.get(ident) is scope:
                del self._request_streams[ident]
            self._stateless_requests.discard(ident)
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
                failure = await self._resume(StreamPosition(None), connect_at_once=True, opened=opened)
                if failure is not None:
                    log.debug("GET stream ended: %s", failure.message)
        finally:
            opened.set()

    async def _resume(
        self, position: StreamPosition, *, connect_at_once: bool = False, opened: anyio.Event | None = None
    ) -> Failure | None:
        """Reconnect with GET (carrying ``Last-Event-ID`` where known) until the stream is done.

        A request's stream is done once its response came: then this returns ``None``. The GET
        stream is never done; it ends with the transport or when the server refuses it. Each
        attempt waits the server's ``retry:`` delay first (except the GET stream's first,
        with ``connect_at_once``); attempts that deliver nothing count toward
        ``max_reconnects``. Returns why it gave up.
        """
        ident = position.request_id
        what = "GET stream" if ident is None else f"stream of request {ident!r}"
        if ident is not None and ident in self._stateless_requests:
            return Failure(
                CONNECTION_CLOSED,
                f"The {what} ended before its response (a stateless request's stream is not resumed)",
            )
        attempts = 0
        wait = not connect_at_once
        while not position.answered and not self._closed:
            if ident is not None and position.last_event_id is None:
                return Failure(
                    CONNECTION_CLOSED,
                    f"The {what} ended before its response and cannot be resumed (no event id)",
                )
            if wait:
                if attempts >= self.max_reconnects:
                    return Failure(
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
            except Failure as failure:
                log.debug("connecting the %s failed: %s", what, failure.message)
                continue
            finally:
                if opened is not None:
                    opened.set()  # the server has answered (or the attempt failed)
            try:
                status, media = response.status_code, media_type(response)
                if status == 405:
                    return Failure(
                        CONNECTION_CLOSED, f"The server offers no GET stream (HTTP 405) for the {what}", 405
                    )
                if status == 404 and sent_session is not None:
                    return Failure(
                        CONNECTION_CLOSED,
                        f"The server ended the session ({SESSION_HEADER} {sent_session}); the {what} is lost",
                        404,
                    )
                if status != 200 or media != EVENT_STREAM:
                    body = await error_body(response)
                    return Failure(
                        INTERNAL_ERROR,
                        f"GET {self.url} for the {what} answered HTTP {status} ({media or 'no content type'})"
                        + (f": {body}" if body else ""),
                        status,
                        body,
                    )
                if await self._read_events(position, response):
                    attempts = 0
            finally:
                await close(response)
        return None

    async def _follow(self, position: StreamPosition, response: httpx.Response) -> Failure | None:
        """Read the POST's own stream; a failure only if it must not be resumed."""
        try:
            await self._read_events(position, response)
        except Failure as failure:
            return failure
        return None

    async def _read_events(self, position: StreamPosition, response: httpx.Response) -> bool:
        """Deliver the stream's messages until it ends, drops or brings the awaited response.

        Returns whether any event arrived. Raises :class:`Failure` for an oversized message
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
                            raise Failure(
                                INTERNAL_ERROR,
                                f"A message of {event.size} bytes or more on the stream of request "
                                f"{ident!r} exceeds the limit of {self.max_message_size} bytes",
                            )
                        await self._queue_error(MessageTooLarge(event.size, self.max_message_size))
                        continue
                    if event.type != "message" or not event.data.strip():
                        continue  # another kind of event, or a priming event (no message)
                    for message in split(event.data):
                        envelope = peek_message(message)
                        await self._deliver(message, envelope)
                        if ident is not None and is_response_to(envelope, ident):
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
