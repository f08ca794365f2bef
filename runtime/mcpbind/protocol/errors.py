"""JSON-RPC error codes and the exception that carries one; :class:`ToolError`, the failure
a tool reports to the model."""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Any, Final

import msgspec
from msgspec import UNSET

if TYPE_CHECKING:
    from mcpbind.types import ElicitRequestURLParams

__all__ = [
    "CONNECTION_CLOSED",
    "HEADER_MISMATCH",
    "INTERNAL_ERROR",
    "INVALID_PARAMS",
    "INVALID_REQUEST",
    "METHOD_NOT_FOUND",
    "MISSING_REQUIRED_CLIENT_CAPABILITY",
    "PARSE_ERROR",
    "REQUEST_TIMEOUT",
    "RESOURCE_NOT_FOUND",
    "UNSUPPORTED_PROTOCOL_VERSION",
    "URL_ELICITATION_REQUIRED",
    "McpError",
    "MissingRequiredClientCapabilityError",
    "UnsupportedProtocolVersionError",
    "URLElicitationRequiredError",
    "error_from_response",
    "ToolError",
]

PARSE_ERROR: Final = -32700
INVALID_REQUEST: Final = -32600
METHOD_NOT_FOUND: Final = -32601
INVALID_PARAMS: Final = -32602
INTERNAL_ERROR: Final = -32603
# Codes of the implementation-defined range that MCP SDKs agree on.
RESOURCE_NOT_FOUND: Final = -32002
REQUEST_TIMEOUT: Final = -32001
CONNECTION_CLOSED: Final = -32000
# MCP 2025-11-25: the request needs URL mode elicitations completed first.
URL_ELICITATION_REQUIRED: Final = -32042
# MCP 2026-07-28 (the range -32020 to -32099 is the specification's): an HTTP header disagrees
# with the body; the request needs a client capability its ``_meta`` does not declare; the
# request's protocol version is not one the server speaks.
HEADER_MISMATCH: Final = -32020
MISSING_REQUIRED_CLIENT_CAPABILITY: Final = -32021
UNSUPPORTED_PROTOCOL_VERSION: Final = -32022


class McpError(Exception):
    """An error with a JSON-RPC code: raised by a handler it becomes the error response; raised
    to a caller it is the peer's error response (or a local failure such as a timeout)."""

    def __init__(self, code: int, message: str, data: Any = UNSET) -> None:
        super().__init__(message)
        self.code = code
        self.message = message
        self.data = data

    def __repr__(self) -> str:
        return f"{type(self).__name__}({self.code}, {self.message!r})"


class URLElicitationRequiredError(McpError):
    """-32042: the request cannot be processed until the user completes these URL mode
    elicitations (MCP 2025-11-25). A server's handler raises it; a client's call raises it when
    the server answered so, with ``elicitations`` parsed.

    ``data`` is ``{"elicitations": [...]}`` (plus whatever else the server's error carried).
    After the user completes them the request can be retried; the server may tell the client
    with ``notifications/elicitation/complete`` (see
    :func:`mcpbind.server.elicitation.notify_elicitation_complete`).
    """

    def __init__(
        self,
        elicitations: Sequence[ElicitRequestURLParams],
        message: str = "This request requires more information.",
        data: Any = UNSET,
    ) -> None:
        self.elicitations = list(elicitations)
        if data is UNSET:
            if not self.elicitations:
                raise ValueError("a URLElicitationRequiredError needs at least one elicitation")
            data = {"elicitations": self.elicitations}
        super().__init__(URL_ELICITATION_REQUIRED, message, data)


class UnsupportedProtocolVersionError(McpError):
    """-32022: the request's protocol version is not one the server speaks; ``supported`` lists
    those it does (``data.supported``), ``requested`` repeats the one asked for."""

    def __init__(self, requested: str, supported: Sequence[str], message: str | None = None) -> None:
        self.requested = requested
        self.supported = list(supported)
        super().__init__(
            UNSUPPORTED_PROTOCOL_VERSION,
            message
            if message is not None
            else f"Unsupported protocol version {requested!r}; supported: {', '.join(self.supported)}",
            {"supported": self.supported, "requested": requested},
        )


class MissingRequiredClientCapabilityError(McpError):
    """-32021: serving the request needs client capabilities its ``_meta`` did not declare
    (``data.requiredCapabilities``, as ``ClientCapabilities`` members)."""

    def __init__(self, required: dict[str, Any], message: str | None = None) -> None:
        self.required = required
        names = ", ".join(sorted(required))
        super().__init__(
            MISSING_REQUIRED_CLIENT_CAPABILITY,
            message if message is not None else f"This request needs the client capabilities: {names}",
            {"requiredCapabilities": required},
        )


def error_from_response(code: int, message: str, data: Any = UNSET) -> McpError:
    """The exception for an error response: :class:`URLElicitationRequiredError` for -32042 when
    its ``data.elicitations`` are URL mode elicitations, else :class:`McpError`."""
    if code == UNSUPPORTED_PROTOCOL_VERSION and isinstance(data, dict):
        supported, requested = data.get("supported"), data.get("requested")
        if isinstance(supported, list) and all(isinstance(v, str) for v in supported):
            return UnsupportedProtocolVersionError(
                requested if isinstance(requested, str) else "", supported, message
            )
    if code == MISSING_REQUIRED_CLIENT_CAPABILITY and isinstance(data, dict):
        required = data.get("requiredCapabilities")
        if isinstance(required, dict):
            return MissingRequiredClientCapabilityError(required, message)
    if code == URL_ELICITATION_REQUIRED and isinstance(data, dict):
        from mcpbind.types import ElicitRequestURLParams

        try:
            elicitations = msgspec.convert(data.get("elicitations"), list[ElicitRequestURLParams])
        except msgspec.ValidationError:
            pass
        else:
            return URLElicitationRequiredError(elicitations, message, data)
    return McpError(code, message, data)


class ToolError(Exception):
    """Raised by a tool to fail with a message meant for the client (and its model): the call
    is answered with an ``isError`` result holding ``str(error)``, whatever the server's
    ``expose_internal_errors``. Any other exception a tool raises is logged on the server with
    its traceback, and its text is sent only when ``expose_internal_errors`` is set."""
