"""The media types of a request to the HTTP server apps: whether its ``Content-Type`` is JSON,
and which of JSON and SSE its ``Accept`` takes."""

from __future__ import annotations

from typing import Final

__all__ = ["accepts", "is_json"]

# Results of accepts() kept per header value (clients send the same few), up to this many.
_CACHED: Final = 256
_accepted: dict[bytes, tuple[bool, bool]] = {}

_JSON_RANGES: Final = frozenset({b"*/*", b"application/json", b"application/*"})
_SSE_RANGES: Final = frozenset({b"*/*", b"text/event-stream", b"text/*"})


def accepts(accept: bytes) -> tuple[bool, bool]:
    """Whether an ``Accept`` header (several joined with commas) lists JSON, and SSE; the
    wildcards (``*/*``, ``application/*``, ``text/*``) count, parameters are ignored."""
    known = _accepted.get(accept)
    if known is not None:
        return known
    json_ok = sse_ok = False
    for part in accept.split(b","):
        media = part.split(b";", 1)[0].strip().lower()
        if media in _JSON_RANGES:
            json_ok = True
        if media in _SSE_RANGES:
            sse_ok = True
    if len(_accepted) < _CACHED:
        _accepted[accept] = (json_ok, sse_ok)
    return json_ok, sse_ok


def is_json(content_type: bytes | None) -> bool:
    """Whether a ``Content-Type`` header says ``application/json`` (with any parameters)."""
    return content_type == b"application/json" or (
        content_type is not None and content_type.split(b";", 1)[0].strip().lower() == b"application/json"
    )
