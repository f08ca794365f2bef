"""The error answers of the HTTP server apps: an HTTP status with a JSON-RPC error object as
body (:class:`HttpError`, raised where the error is found and written by :func:`send_error`),
and the bodiless answers (202, 204) written next to them."""

from __future__ import annotations

from typing import Any, Final

from msgspec import UNSET

from mcpbind.protocol.jsonrpc import RequestId
from mcpbind.protocol.wire import Codec
from mcpbind.transports.http._asgi import Headers, Send

__all__ = [
    "CLOSE_CONNECTION",
    "EMPTY",
    "JSON_CONTENT_TYPE",
    "RETRY_AFTER",
    "SERVER_BUSY",
    "SESSION_NOT_FOUND",
    "HttpError",
    "send_empty",
    "send_error",
]

JSON_CONTENT_TYPE: Final = (b"content-type", b"application/json")
EMPTY: Final[Headers] = []
RETRY_AFTER: Final[Headers] = [(b"retry-after", b"1")]
CLOSE_CONNECTION: Final[Headers] = [(b"connection", b"close")]

# JSON-RPC codes of the implementation-defined range the Streamable HTTP server answers with:
# an unknown session (as other SDKs answer it), and a server without room for more.
SESSION_NOT_FOUND: Final = -32001
SERVER_BUSY: Final = -32000


class HttpError(Exception):
    """An HTTP error answer: status, JSON-RPC code and message, the request id if known,
    headers of its own (``Retry-After``, ``Connection: close``, ``Allow``), and the error's
    ``data``, if any."""

    def __init__(
        self,
        status: int,
        code: int,
        message: str,
        ident: RequestId | None = None,
        headers: Headers = EMPTY,
        data: Any = UNSET,
    ) -> None:
        super().__init__(message)
        self.status = status
        self.code = code
        self.message = message
        self.ident = ident
        self.headers = headers
        self.data = data  # the error's ``data`` member (none when UNSET)


async def send_error(send: Send, error: HttpError, headers: Headers = EMPTY) -> None:
    """Answer with ``error``; ``headers`` go before its own."""
    body = Codec.encode_error(error.ident, error.code, error.message, error.data)
    await send(
        {
            "type": "http.response.start",
            "status": error.status,
            "headers": [
                JSON_CONTENT_TYPE,
                (b"content-length", b"%d" % len(body)),
                *headers,
                *error.headers,
            ],
        }
    )
    await send({"type": "http.response.body", "body": body})


async def send_empty(send: Send, status: int, headers: Headers) -> None:
    """Answer with ``status`` and no body (202 Accepted, 204 No Content)."""
    await send({"type": "http.response.start", "status": status, "headers": headers})
    await send({"type": "http.response.body", "body": b""})
