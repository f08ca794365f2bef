"""What a transport is: framed messages in and out, nothing else.

A transport moves whole JSON-RPC messages as bytes. It does not parse them, does not know about
requests or sessions, and is used by one reader and any number of writers (writes of one
message are never interleaved with another's).
"""

from __future__ import annotations

from typing import Protocol

from mcpbind.protocol.wire import RequestId

__all__ = ["DEFAULT_MAX_MESSAGE_SIZE", "MessageTooLarge", "Transport"]

# 16 MiB: far above any ordinary MCP message, low enough that one line cannot exhaust memory.
DEFAULT_MAX_MESSAGE_SIZE = 16 * 1024 * 1024


class MessageTooLarge(Exception):
    """A received message exceeded the transport's limit; it was discarded whole.

    The transport stays usable: the next ``receive()`` returns the message after it.
    """

    def __init__(self, size: int, limit: int) -> None:
        super().__init__(f"message of {size} bytes or more exceeds the limit of {limit} bytes")
        self.size = size
        self.limit = limit


class Transport(Protocol):
    """Framed messages in and out.

    ``send`` says which request a message belongs to, for transports that route by it (the
    Streamable HTTP server answers a POST on that POST's own stream): ``related`` is the id of
    the request received from the peer that the message answers (``final``: it is the response
    itself) or was sent while handling (progress, logging, a sampling request). Both are left
    unset for everything else. Transports with one channel (stdio, memory) ignore them.

    A transport may also offer ``send_nowait(message) -> bool``: send the whole message now,
    without waiting for anything, or send nothing and return ``False`` (stdio and memory do;
    a session then needs no timer around the send of a request).

    A transport whose ``send`` of a message related to no request (``related`` unset) never
    waits for its peer says so with ``unrelated_send_waits_for_peer = False``: it waits at
    most for its own machinery, and gives up on a peer that does not read (the HTTP servers'
    transports, which end or cut off such a client). A server telling every session something
    (:meth:`Server.resource_updated <mcpbind.server.server.Server.resource_updated>`, list changes)
    awaits those sends in line; for any other transport the message goes through the
    session's queue (:meth:`Session.send_soon <mcpbind.runtime.session.Session.send_soon>`), so that
    no peer holds back the others.

    ``receive`` raises ``anyio.EndOfStream`` once the peer has closed its side but may still
    read (the end of stdin: a session still answers what it received), and
    ``anyio.BrokenResourceError`` once the peer is gone altogether (a session then stops its
    handlers at once); ``anyio.ClosedResourceError`` after our own ``aclose``, and
    ``MessageTooLarge`` for a message over the limit. ``send`` raises
    ``anyio.BrokenResourceError`` or ``anyio.ClosedResourceError`` when the peer is gone.

    ``aclose`` should drop nothing already given to ``send``: stdio writes a message being
    written, and those held back, before it closes (for up to a second, for a peer that does
    not read); memory leaves what it sent for the peer to receive.
    """

    async def receive(self) -> bytes: ...

    async def send(self, message: bytes, related: RequestId | None = None, final: bool = False) -> None: ...

    async def aclose(self) -> None: ...
