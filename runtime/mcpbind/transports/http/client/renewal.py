"""Renewing an expired session of the Streamable HTTP client.

When a request carrying a session id gets 404, the session has expired: the transport starts
a new one by itself (it sends the client's original initialize again, under a new id, keeps
its answer to itself, sends ``notifications/initialized`` and reopens the GET stream), and
the failed message is sent once more. Concurrent failures renew once.
"""

from __future__ import annotations

import logging

import httpx
import msgspec

from mcpbind.protocol.errors import INTERNAL_ERROR
from mcpbind.protocol.wire import Codec
from mcpbind.transports.http.client.core import EVENT_STREAM, JSON
from mcpbind.transports.http.client.errors import Failure, HTTPTransportError
from mcpbind.transports.http.client.messages import initialize_succeeded, is_response_to, peek_message, split
from mcpbind.transports.http.client.responses import close, media_type, read_body
from mcpbind.transports.http.client.sse_parse import SSEDecoder, SSEEvent
from mcpbind.transports.http.client.streams import SSEStreams

__all__ = ["SessionRenewal"]

log = logging.getLogger("mcpbind.http.client")


class SessionRenewal(SSEStreams):
    """Starting a new session after the server forgot the old one (HTTP 404)."""

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
            except (Failure, HTTPTransportError, httpx.HTTPError, msgspec.MsgspecError) as exc:
                log.warning("could not start a new session after %s expired: %s", expired, exc)
                return False
            log.info("session %s expired; continuing in session %s", expired, self.session_id)
            return True

    async def _initialize_again(self, original: bytes) -> None:
        try:
            params = msgspec.json.decode(original)
        except msgspec.DecodeError as exc:  # we stored what was sent: cannot happen
            raise Failure(INTERNAL_ERROR, "the initialize request cannot be sent again") from exc
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
                raise Failure(INTERNAL_ERROR, f"initialize answered HTTP {response.status_code}")
            self._learn_session(response)
            answer = await self._private_answer(response, ident)
        finally:
            await close(response)
        self._learn_version(answer)
        initialized = self._initialized_message or Codec.encode_notification("notifications/initialized")
        headers = self._request_headers(f"{JSON}, {EVENT_STREAM}")
        headers["content-type"] = JSON
        request = self._client.build_request(
            "POST", self.url, content=initialized, headers=headers, timeout=self._request_timeout
        )
        response = await self._open(request)
        await close(response)
        if not 200 <= response.status_code < 300:
            raise Failure(INTERNAL_ERROR, f"notifications/initialized answered HTTP {response.status_code}")
        await self._open_get_stream()

    async def _private_answer(self, response: httpx.Response, ident: str) -> bytes:
        """The response to our own initialize: read here, never delivered."""
        media = media_type(response)
        if media == JSON:
            body = await read_body(response, self.max_message_size)
            candidates = split(body) if body is not None else []
        elif media == EVENT_STREAM:
            candidates = []
            decoder = SSEDecoder(self.max_message_size)
            async for chunk in response.aiter_raw():
                for event in decoder.feed(chunk):
                    if isinstance(event, SSEEvent) and event.type == "message":
                        candidates.extend(split(event.data))
                if any(is_response_to(peek_message(item), ident) for item in candidates):
                    break
        else:
            raise Failure(INTERNAL_ERROR, f"initialize answered with content type {media!r}")
        for item in candidates:
            if is_response_to(peek_message(item), ident):
                if not initialize_succeeded(item):
                    raise Failure(INTERNAL_ERROR, f"initialize failed: {item[:200]!r}")
                return item
        raise Failure(INTERNAL_ERROR, "no answer to initialize")
