"""What the protocol core (:class:`~mcpbind.protocol.connection.Connection`) makes of each
message it receives: one event per thing to act on, for the session driver.

Events are frozen msgspec structs (never encoded): immutable values compared by their fields,
as frozen dataclasses would be, but their classes cost next to nothing to define at start-up
and an event nothing beyond a C constructor to make, once per message."""

from __future__ import annotations

from typing import Any

import msgspec

from mcpbind import types
from mcpbind.protocol.envelope import Envelope
from mcpbind.protocol.errors import McpError
from mcpbind.protocol.jsonrpc import RequestId

__all__ = [
    "CancelRequested",
    "ErrorReceived",
    "Event",
    "NotificationReceived",
    "ProgressReceived",
    "Reply",
    "RequestReceived",
    "ResponseReceived",
    "SessionReady",
    "UnmatchedResponse",
]


class RequestReceived(msgspec.Struct, frozen=True):
    """A request for a handler: answer it with :meth:`Connection.respond` or ``respond_error``.

    ``envelope`` is a stateless (2026-07-28 and later) request's own metadata, which stands in
    for what the handshake told a session; ``None`` for a request of a session."""

    id: RequestId
    method: str
    params: Any
    envelope: Envelope | None = None


class NotificationReceived(msgspec.Struct, frozen=True):
    method: str
    params: Any


class ResponseReceived(msgspec.Struct, frozen=True):
    """The typed result of a request this side sent."""

    id: RequestId
    result: Any


class ErrorReceived(msgspec.Struct, frozen=True):
    """The peer answered a request this side sent with an error."""

    id: RequestId
    error: McpError


class UnmatchedResponse(msgspec.Struct, frozen=True):
    """A response whose id matches no pending request (late, duplicated or bogus): dropped."""

    id: RequestId | None


class CancelRequested(msgspec.Struct, frozen=True):
    """The peer cancelled a request it sent; its handler should stop and send nothing."""

    request_id: RequestId
    reason: str | None


class ProgressReceived(msgspec.Struct, frozen=True):
    token: str | int
    params: types.ProgressNotificationParams


class Reply(msgspec.Struct, frozen=True):
    """Bytes the core produced on its own (an error, a ping or initialize answer) to send now."""

    data: bytes
    # The id of the request it answers, when there is one.
    id: RequestId | None = None


class SessionReady(msgspec.Struct, frozen=True):
    """The handshake is complete on this side."""


Event = (
    RequestReceived
    | NotificationReceived
    | ResponseReceived
    | ErrorReceived
    | UnmatchedResponse
    | CancelRequested
    | ProgressReceived
    | Reply
    | SessionReady
)
