"""The JSON-RPC 2.0 messages as the codec receives them, and :class:`WireError`, the failure of
one that cannot be accepted.

``params`` and ``result`` stay :class:`msgspec.Raw` here: untouched bytes that
:class:`mcpbind.protocol.wire.Codec` decodes into a method's struct, or a proxy forwards as they
are.
"""

from __future__ import annotations

from typing import Any

import msgspec
from msgspec import UNSET, Raw, UnsetType

from mcpbind.protocol.errors import McpError

__all__ = [
    "ErrorObject",
    "ErrorResponse",
    "Incoming",
    "JSON_WHITESPACE",
    "Notification",
    "Request",
    "RequestId",
    "Response",
    "WireError",
]


RequestId = int | str

# The bytes JSON allows between tokens (RFC 8259, section 2).
JSON_WHITESPACE = b" \t\r\n"


class ErrorObject(msgspec.Struct, omit_defaults=True):
    """The ``error`` member of an error response."""

    code: int
    message: str
    data: Any = UNSET


class Request(msgspec.Struct, frozen=True):
    """A request as received: ``params`` still raw (empty when absent)."""

    id: RequestId
    method: str
    params: Raw


class Notification(msgspec.Struct, frozen=True):
    """A notification as received: ``params`` still raw (empty when absent)."""

    method: str
    params: Raw


class Response(msgspec.Struct, frozen=True):
    """A successful response as received: ``result`` still raw."""

    id: RequestId
    result: Raw


class ErrorResponse(msgspec.Struct, frozen=True):
    """An error response. ``id`` is ``None`` for ``"id": null`` (the peer could not read the
    request's id) and ``UNSET`` when the member is absent, which 2025-11-25 and later allow."""

    id: RequestId | UnsetType | None
    error: ErrorObject


Incoming = Request | Notification | Response | ErrorResponse


class WireError(McpError):
    """A message that cannot be accepted, with the JSON-RPC error to answer it with and the
    request id when it could be read. ``response_id`` is set instead when the bad message was
    recognizably a response (it has ``result`` or ``error``): that is never answered, but the
    request it answers can be failed."""

    def __init__(
        self,
        code: int,
        message: str,
        id: RequestId | None = None,
        data: Any = UNSET,
        *,
        response_id: RequestId | None = None,
    ) -> None:
        super().__init__(code, message, data)
        self.id = id
        self.response_id = response_id

    def to_error(self) -> ErrorObject:
        return ErrorObject(self.code, self.message, self.data)

    def __repr__(self) -> str:
        return f"WireError({self.code}, {self.message!r}, id={self.id!r})"
