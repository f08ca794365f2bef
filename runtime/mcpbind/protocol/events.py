"""What the protocol core (:class:`~mcpbind.protocol.connection.Connection`) makes of each
message it receives: one event per thing to act on, for the session driver."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from mcpbind import types
from mcpbind.protocol.envelope import Envelope
from mcpbind.protocol.errors import McpError
from mcpbind.protocol.wire import RequestId

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


@dataclass(frozen=True, slots=True)
class RequestReceived:
    """A request for a handler: answer it with :meth:`Connection.respond` or ``respond_error``.

    ``envelope`` is a stateless (2026-07-28 and later) request's own metadata, which stands in
    for what the handshake told a session; ``None`` for a request of a session."""

    id: RequestId
    method: str
    params: Any
    envelope: Envelope | None = None


@dataclass(frozen=True, slots=True)
class NotificationReceived:
    method: str
    params: Any


@dataclass(frozen=True, slots=True)
class ResponseReceived:
    """The typed result of a request this side sent."""

    id: RequestId
    result: Any


@dataclass(frozen=True, slots=True)
class ErrorReceived:
    """The peer answered a request this side sent with an error."""

    id: RequestId
    error: McpError


@dataclass(frozen=True, slots=True)
class UnmatchedResponse:
    """A response whose id matches no pending request (late, duplicated or bogus): dropped."""

    id: RequestId | None


@dataclass(frozen=True, slots=True)
class CancelRequested:
    """The peer cancelled a request it sent; its handler should stop and send nothing."""

    request_id: RequestId
    reason: str | None


@dataclass(frozen=True, slots=True)
class ProgressReceived:
    token: str | int
    params: types.ProgressNotificationParams


@dataclass(frozen=True, slots=True)
class Reply:
    """Bytes the core produced on its own (an error, a ping or initialize answer) to send now."""

    data: bytes
    # The id of the request it answers, when there is one.
    id: RequestId | None = None


@dataclass(frozen=True, slots=True)
class SessionReady:
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
