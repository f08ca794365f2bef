"""What a transport is: framed messages in and out, nothing else.

A transport moves whole JSON-RPC messages as bytes. It does not parse them, does not know about
requests or sessions, and is used by one reader and any number of writers (writes of one
message are never interleaved with another's).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Literal, NamedTuple, Protocol, runtime_checkable

from mcpbind.protocol.jsonrpc import RequestId

__all__ = [
    "DEFAULT_MAX_MESSAGE_SIZE",
    "BatchNowaitSender",
    "ClosesStreams",
    "Features",
    "MessageTooLarge",
    "NowaitSender",
    "RelatedSender",
    "Transport",
    "UnrelatedSendsNeverWait",
    "batch_sender",
    "features",
    "nowait_sender",
    "related_sender",
    "stream_closer",
]

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

    ``receive`` raises ``anyio.EndOfStream`` once the peer has closed its side but may still
    read (the end of stdin: a session still answers what it received), and
    ``anyio.BrokenResourceError`` once the peer is gone altogether (a session then stops its
    handlers at once); ``anyio.ClosedResourceError`` after our own ``aclose``, and
    ``MessageTooLarge`` for a message over the limit. ``send`` raises
    ``anyio.BrokenResourceError`` or ``anyio.ClosedResourceError`` when the peer is gone.

    ``aclose`` should drop nothing already given to ``send``: stdio writes a message being
    written, and those held back, before it closes (for up to a second, for a peer that does
    not read); memory leaves what it sent for the peer to receive.

    A transport may offer more, each feature a small protocol of its own, learnt once per
    transport class when a session starts (:func:`features`): :class:`RelatedSender` (which
    received request a message belongs to), :class:`NowaitSender` (a send that never waits)
    and :class:`UnrelatedSendsNeverWait` (a send that never waits for the peer).
    """

    async def receive(self) -> bytes: ...

    async def send(self, message: bytes) -> None: ...

    async def aclose(self) -> None: ...


@runtime_checkable
class RelatedSender(Protocol):
    """A transport that wants to know which received request a message belongs to.

    ``send_related(message, related, final)``: ``related`` is the id of the request received
    from the peer that the message answers (``final``: it is the response itself) or was sent
    while handling (progress, logging, a sampling request). A session sends everything else
    with ``send``. The Streamable HTTP server routes by it (a POST is answered on that POST's
    own stream), the legacy SSE server lets only that request's handler wait for room, and
    stdio holds responses back to write a burst of them at once.
    """

    async def send_related(self, message: bytes, related: RequestId, final: bool = False) -> None: ...


@runtime_checkable
class NowaitSender(Protocol):
    """A transport that can send without waiting: ``send_nowait(message)`` sends the whole
    message now, or sends nothing and returns ``False`` (stdio and memory do; a session then
    needs no timer around the send of a request, and :meth:`Session.send_soon
    <mcpbind.runtime.session.Session.send_soon>` no task)."""

    def send_nowait(self, message: bytes) -> bool: ...


@runtime_checkable
class BatchNowaitSender(Protocol):
    """A transport that can send several messages in one write without waiting:
    ``send_batch_nowait(messages)`` writes the first of them, whole, now, as many as it can at
    once, and returns how many it wrote (the rest, if any, are the caller's to send). Stdio
    does: a client's requests made in one turn of the event loop leave in one write (see
    :meth:`Sender.request <mcpbind.runtime.sender.Sender.request>`)."""

    def send_batch_nowait(self, messages: Sequence[bytes]) -> int: ...


class UnrelatedSendsNeverWait(Protocol):
    """A transport whose ``send`` (a message related to no request) never waits for its peer
    says so with ``unrelated_send_waits_for_peer = False``: it waits at most for its own
    machinery, and gives up on a peer that does not read (the HTTP servers' transports, which
    end or cut off such a client). A server telling every session something
    (:meth:`Server.resource_updated <mcpbind.server.server.Server.resource_updated>`, list
    changes) awaits those sends in line; for any other transport the message goes through the
    session's queue (:meth:`Session.send_soon <mcpbind.runtime.session.Session.send_soon>`), so
    that no peer holds back the others."""

    unrelated_send_waits_for_peer: Literal[False]


@runtime_checkable
class ClosesStreams(Protocol):
    """A transport that can end the connection carrying a request's stream and keep the stream,
    for the client to resume (the Streamable HTTP server's SSE polling, MCP 2025-11-25):
    ``close_stream(ident, retry_ms)`` is False where it cannot (no such stream, nothing to resume
    it from, an older session)."""

    async def close_stream(self, ident: RequestId, retry_ms: int | None = None) -> bool: ...


class Features(NamedTuple):
    """What a transport class offers beyond :class:`Transport`."""

    related: bool  # a RelatedSender
    nowait: bool  # a NowaitSender
    closes_streams: bool  # a ClosesStreams
    unrelated_send_waits_for_peer: bool  # False: an UnrelatedSendsNeverWait
    batches: bool = False  # a BatchNowaitSender


_features: dict[type, Features] = {}


def features(transport: Transport) -> Features:
    """The optional features of ``transport``'s class (learnt once per class)."""
    cls = type(transport)
    found = _features.get(cls)
    if found is None:
        found = _features[cls] = Features(
            issubclass(cls, RelatedSender),
            issubclass(cls, NowaitSender),
            issubclass(cls, ClosesStreams),
            getattr(cls, "unrelated_send_waits_for_peer", True) is not False,
            issubclass(cls, BatchNowaitSender),
        )
    return found


def related_sender(transport: Transport) -> RelatedSender | None:
    """``transport`` as a :class:`RelatedSender`, or None if its class is not one."""
    return transport if features(transport).related else None  # type: ignore[return-value]


def nowait_sender(transport: Transport) -> NowaitSender | None:
    """``transport`` as a :class:`NowaitSender`, or None if its class is not one."""
    return transport if features(transport).nowait else None  # type: ignore[return-value]


def batch_sender(transport: Transport) -> BatchNowaitSender | None:
    """``transport`` as a :class:`BatchNowaitSender`, or None if its class is not one."""
    return transport if features(transport).batches else None  # type: ignore[return-value]


def stream_closer(transport: Transport) -> ClosesStreams | None:
    """``transport`` as a :class:`ClosesStreams`, or None if its class is not one."""
    return transport if features(transport).closes_streams else None  # type: ignore[return-value]
