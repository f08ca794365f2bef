"""What the tests' own raw ASGI apps share (the local authorization server, the scripted HTTP
servers): the lifespan protocol answered, and a request's body read whole."""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import Any

__all__ = ["BodyTooLarge", "Message", "Receive", "Scope", "Send", "answer_lifespan", "read_body"]

Scope = dict[str, Any]
Message = dict[str, Any]
Receive = Callable[[], Awaitable[Message]]
Send = Callable[[Message], Awaitable[None]]


class BodyTooLarge(Exception):
    """The body of a request is larger than :func:`read_body` was told to read."""


async def answer_lifespan(receive: Receive, send: Send) -> None:
    """Answer an ASGI server's lifespan messages (startup, then shutdown) until the shutdown."""
    while True:
        message = await receive()
        if message["type"] == "lifespan.startup":
            await send({"type": "lifespan.startup.complete"})
        elif message["type"] == "lifespan.shutdown":
            await send({"type": "lifespan.shutdown.complete"})
            return


async def read_body(receive: Receive, limit: int | None = None) -> bytes:
    """The body of the request ``receive`` delivers, read whole; :class:`BodyTooLarge` when it
    is larger than ``limit`` bytes (when given)."""
    body = b""
    while True:
        message = await receive()
        chunk: bytes = message.get("body", b"")
        body += chunk
        if limit is not None and len(body) > limit:
            raise BodyTooLarge(f"the body is larger than {limit} bytes")
        if not message.get("more_body", False):
            return body
