"""What the Streamable HTTP app reads of one HTTP request before it acts: the headers it uses
(:class:`RequestHead`), and the id and method of the message a POST carries
(:func:`peek_message`), or why it is no JSON-RPC message (400)."""

from __future__ import annotations

from collections.abc import Iterable
from typing import Final

import msgspec

from mcpbind.protocol.errors import INVALID_REQUEST, PARSE_ERROR
from mcpbind.protocol.jsonrpc import RequestId
from mcpbind.protocol.peek import Peeked, peek
from mcpbind.protocol.salvage import salvage_id
from mcpbind.transports.http.body import BodyProgress
from mcpbind.transports.http.errors import HttpError

__all__ = ["REQUEST_FIELDS", "ROUTING_FIELDS", "RequestHead", "peek_message", "request_id"]


class RequestHead(BodyProgress):
    """What the app reads from one HTTP request's headers (and its body's progress)."""

    __slots__ = (
        "accept",
        "content_length",
        "content_type",
        "host",
        "last_event_id",
        "method",
        "name",
        "origin",
        "repeated",
        "session_id",
        "version",
    )

    def __init__(self, headers: Iterable[tuple[bytes, bytes]]) -> None:
        self.reserved = 0  # (BodyProgress's fields, set here: one call less per request)
        self.deadline: float | None = None
        self.accept: bytes | None = None
        self.content_type: bytes | None = None
        self.content_length: bytes | None = None
        self.session_id: bytes | None = None
        self.version: bytes | None = None
        self.last_event_id: bytes | None = None
        self.method: bytes | None = None  # Mcp-Method (2026-07-28)
        self.name: bytes | None = None  # Mcp-Name (2026-07-28)
        self.repeated: bytes | None = None  # a header of ROUTING_FIELDS sent twice
        # Host and Origin, for the app's checks (the last of several, as the checks read them).
        self.host: bytes | None = None
        self.origin: bytes | None = None
        accept: bytes | None = None
        field_of = REQUEST_FIELDS.get
        for name, value in headers:
            field = field_of(name)
            if field == "accept":
                accept = value if accept is None else accept + b"," + value  # several make one list
            elif field is not None:
                if field in ROUTING_FIELDS and getattr(self, field) is not None:
                    self.repeated = name  # readers taking the first and the last would disagree
                setattr(self, field, value)
        self.accept = accept


# The headers RequestHead keeps (ASGI gives their names in lower case), by the field they go to.
REQUEST_FIELDS: Final = {
    b"accept": "accept",
    b"content-type": "content_type",
    b"content-length": "content_length",
    b"mcp-session-id": "session_id",
    b"mcp-protocol-version": "version",
    b"last-event-id": "last_event_id",
    b"mcp-method": "method",
    b"mcp-name": "name",
    b"host": "host",
    b"origin": "origin",
}
# The fields of the headers a request's body is checked against (2026-07-28): one each.
ROUTING_FIELDS: Final = frozenset({"version", "method", "name"})


def peek_message(body: bytes) -> Peeked:
    """The id and method of the message in a POST body (the session decodes it fully); 400
    for anything but one JSON-RPC message."""
    try:
        return peek(body)
    except msgspec.ValidationError as exc:
        if body.lstrip()[:1] == b"[":
            try:  # msgspec stopped at the "[": is the rest JSON at all?
                msgspec.json.decode(body, type=msgspec.Raw)
            except msgspec.DecodeError as not_json:
                raise HttpError(400, PARSE_ERROR, f"Parse error: {not_json}") from None
            except RecursionError:
                raise HttpError(400, PARSE_ERROR, "Parse error: JSON nested too deeply") from None
            raise HttpError(
                400, INVALID_REQUEST, "Invalid request: batches (JSON arrays) are not accepted"
            ) from None
        raise HttpError(400, INVALID_REQUEST, f"Invalid request: {exc}", request_id(body)) from None
    except msgspec.DecodeError as exc:
        raise HttpError(400, PARSE_ERROR, f"Parse error: {exc}", request_id(body)) from None
    except RecursionError:
        raise HttpError(400, PARSE_ERROR, "Parse error: JSON nested too deeply", request_id(body)) from None


def request_id(body: bytes) -> RequestId | None:
    """The id of a request that does not decode, where it can be read (never a response's)."""
    salvaged = salvage_id(body)
    return None if salvaged.response else salvaged.id
