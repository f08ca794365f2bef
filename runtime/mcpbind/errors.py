"""JSON-RPC error codes and the exception that carries one; :class:`ToolError`, the failure
a tool reports to the model."""

from __future__ import annotations

from typing import Any, Final

from msgspec import UNSET

__all__ = [
    "CONNECTION_CLOSED",
    "INTERNAL_ERROR",
    "INVALID_PARAMS",
    "INVALID_REQUEST",
    "METHOD_NOT_FOUND",
    "PARSE_ERROR",
    "REQUEST_TIMEOUT",
    "RESOURCE_NOT_FOUND",
    "McpError",
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


class ToolError(Exception):
    """Raised by a tool to fail with a message meant for the client (and its model): the call
    is answered with an ``isError`` result holding ``str(error)``, whatever the server's
    ``expose_internal_errors``. Any other exception a tool raises is logged on the server with
    its traceback, and its text is sent only when ``expose_internal_errors`` is set."""
