"""The little of ASGI the local authorization server needs: a request read whole (method, path,
query, headers, form or JSON body) and the answers it gives (JSON, redirects, OAuth errors).

Plain ASGI rather than a framework: the test environments install only what mcpbind's extras
need, and the endpoints here are few and simple."""

from __future__ import annotations

import base64
import binascii
import json
from collections.abc import Awaitable, Callable, Mapping
from dataclasses import dataclass
from typing import Any
from urllib.parse import parse_qsl, urlencode, urlsplit, urlunsplit

from tests.raw_asgi import BodyTooLarge, Message, Receive, Scope, Send, read_body

__all__ = [
    "ASGIApp",
    "Message",
    "Receive",
    "Request",
    "Response",
    "Scope",
    "Send",
    "json_response",
    "oauth_error",
    "read_request",
    "redirect",
    "with_query",
]

ASGIApp = Callable[[Scope, Receive, Send], Awaitable[None]]

MAX_BODY = 64 * 1024


@dataclass(frozen=True)
class Request:
    """An HTTP request, read whole. ``query`` and ``form``: the parameters, each at most once
    (a repeated one is kept in ``repeated``: OAuth refuses those, RFC 6749 section 3.1)."""

    method: str
    path: str
    query: dict[str, str]
    headers: dict[str, str]
    body: bytes
    repeated: frozenset[str]

    @property
    def content_type(self) -> str:
        return self.headers.get("content-type", "").split(";")[0].strip().lower()

    def form(self) -> dict[str, str]:
        """The ``application/x-www-form-urlencoded`` body's parameters ({} for another body)."""
        if self.content_type != "application/x-www-form-urlencoded":
            return {}
        return _single(parse_qsl(self.body.decode("utf-8", "replace"), keep_blank_values=True))[0]

    def form_repeats(self) -> frozenset[str]:
        if self.content_type != "application/x-www-form-urlencoded":
            return frozenset()
        return _single(parse_qsl(self.body.decode("utf-8", "replace"), keep_blank_values=True))[1]

    def json(self) -> Any:
        """The JSON body; ``ValueError`` when it is not JSON."""
        return json.loads(self.body)

    def basic_credentials(self) -> tuple[str, str] | None:
        """``Authorization: Basic`` user and password (form-decoded, RFC 6749 section 2.3.1)."""
        header = self.headers.get("authorization", "")
        scheme, _, value = header.partition(" ")
        if scheme.lower() != "basic":
            return None
        try:
            decoded = base64.b64decode(value.strip(), validate=True).decode()
        except (binascii.Error, UnicodeDecodeError):
            return None
        user, colon, password = decoded.partition(":")
        if not colon:
            return None
        return _form_decode(user), _form_decode(password)


def _form_decode(value: str) -> str:
    return dict(parse_qsl(f"v={value}", keep_blank_values=True)).get("v", "")


def _single(pairs: list[tuple[str, str]]) -> tuple[dict[str, str], frozenset[str]]:
    values: dict[str, str] = {}
    repeated: set[str] = set()
    for name, value in pairs:
        if name in values:
            repeated.add(name)
        values[name] = value
    return values, frozenset(repeated)


async def read_request(scope: Scope, receive: Receive) -> Request | None:
    """The request of ``scope``, or None when its body is larger than ``MAX_BODY``."""
    try:
        body = await read_body(receive, MAX_BODY)
    except BodyTooLarge:
        return None
    query, repeated = _single(
        parse_qsl(scope.get("query_string", b"").decode("latin-1"), keep_blank_values=True)
    )
    headers = {name.decode("latin-1").lower(): value.decode("latin-1") for name, value in scope["headers"]}
    return Request(scope["method"], scope["path"], query, headers, body, frozenset(repeated))


@dataclass(frozen=True)
class Response:
    status: int
    body: bytes = b""
    headers: tuple[tuple[str, str], ...] = ()

    async def send(self, send: Send) -> None:
        headers = [(name.encode("latin-1"), value.encode("latin-1")) for name, value in self.headers]
        headers.append((b"content-length", str(len(self.body)).encode()))
        await send({"type": "http.response.start", "status": self.status, "headers": headers})
        await send({"type": "http.response.body", "body": self.body})


def json_response(document: Mapping[str, Any], status: int = 200, *headers: tuple[str, str]) -> Response:
    """A JSON answer; never cached (RFC 6749 section 5.1 asks it of token responses)."""
    return Response(
        status,
        json.dumps(document).encode(),
        (("content-type", "application/json"), ("cache-control", "no-store"), *headers),
    )


def oauth_error(error: str, description: str, status: int = 400, *headers: tuple[str, str]) -> Response:
    """An OAuth error answer (RFC 6749 section 5.2)."""
    return json_response({"error": error, "error_description": description}, status, *headers)


def with_query(url: str, params: Mapping[str, str]) -> str:
    """``url`` with ``params`` added to the query it has (RFC 6749 section 3.1.2)."""
    parts = urlsplit(url)
    query = parse_qsl(parts.query, keep_blank_values=True) + list(params.items())
    return urlunsplit((parts.scheme, parts.netloc, parts.path, urlencode(query), parts.fragment))


def redirect(url: str) -> Response:
    return Response(302, b"", (("location", url), ("cache-control", "no-store")))
