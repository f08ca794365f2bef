"""How the Streamable HTTP client reports what went wrong: :class:`HTTPTransportError` for the
caller of ``send()`` (the backward-compatibility probe), :class:`Failure` for a request that
cannot be completed (it becomes the request's JSON-RPC error response)."""

from __future__ import annotations

from typing import Any

import httpx
from msgspec import UNSET

__all__ = ["Failure", "HTTPTransportError"]


class HTTPTransportError(Exception):
    """The first initialize POST got an HTTP 4xx status: probably no Streamable HTTP server.

    Raised from ``send()`` (and so out of ``Client.connect``), so that a caller can try the
    legacy HTTP+SSE transport on 400, 404 or 405 as the spec's backward compatibility section
    describes. ``body`` is the start of the response body, decoded leniently.
    """

    def __init__(self, status: int, body: str) -> None:
        reason = httpx.codes.get_reason_phrase(status)
        super().__init__(f"HTTP {status} {reason}: {body}" if body else f"HTTP {status} {reason}")
        self.status = status
        self.body = body


class Failure(Exception):
    """Why a request could not be completed: becomes its JSON-RPC error response."""

    def __init__(self, code: int, message: str, status: int | None = None, body: str | None = None) -> None:
        super().__init__(message)
        self.code = code
        self.message = message
        self.status = status
        self.body = body

    def data(self) -> Any:
        if self.status is None:
            return UNSET
        return {"status": self.status, "body": self.body or ""}
