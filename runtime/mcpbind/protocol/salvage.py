"""Reading the id of a message that does not decode: :func:`salvage_id`, so that the error
answering it can name the request, or the request a broken response answers can be failed."""

from __future__ import annotations

import re
from typing import NamedTuple

import msgspec
from msgspec import Raw

from mcpbind.protocol.jsonrpc import JSON_WHITESPACE, RequestId

__all__ = ["SALVAGE_MAX_BYTES", "SalvagedId", "salvage_id"]


class SalvagedId(NamedTuple):
    """What :func:`salvage_id` could read of a message that does not decode."""

    id: RequestId | None
    """The top-level ``id`` when it is an integer or a well-formed string, else ``None``."""
    response: bool
    """The message has a top-level ``result`` or ``error`` and no ``method``: a response,
    which is never answered; the request it answers can be failed instead."""


# A JSON string (escapes skipped whole, so an escaped quote does not end it), or a lone quote
# where one starts that never ends: nothing after that can be read.
_STRING = re.compile(rb'"[^"\\]*(?:\\.[^"\\]*)*"|"', re.DOTALL)
_COLON = re.compile(rb"[ \t\r\n]*:[ \t\r\n]*")
_ID_VALUE = re.compile(rb'-?(?:0|[1-9][0-9]*)(?=[ \t\r\n]*[,}])|"[^"\\]*(?:\\.[^"\\]*)*"', re.DOTALL)
_ID_DECODER = msgspec.json.Decoder(int | str)
# How much of a message salvage_id reads: it runs in Python, so a hostile message must not
# make the error path slow (16 KiB take it about 10 ms at worst, a message of only quotes).
# SDKs send the envelope members first; an id that comes after 16 KiB of params is not read.
SALVAGE_MAX_BYTES = 16 * 1024


def salvage_id(data: bytes | bytearray | memoryview | Raw, max_bytes: int = SALVAGE_MAX_BYTES) -> SalvagedId:
    """The id of a message msgspec would not decode (not JSON, not UTF-8, nested too deeply,
    holding a lone surrogate, of the wrong shape), so that the error can name the request,
    or the pending request a broken response answers can be failed at once.

    Only the error path calls this. It reads the members of the top-level object within the
    first ``max_bytes`` bytes, without recursion and without decoding the rest: strings are
    skipped with a regular expression and the brackets between them counted. The id is read
    when it is an integer (``-?[0-9]+``) or a string that decodes; anything else (``null``, a
    float, a boolean, invalid UTF-8 or a lone surrogate inside it) is no id.
    """
    raw = bytes(memoryview(data)[:max_bytes])
    start = len(raw) - len(raw.lstrip(JSON_WHITESPACE))
    if raw[start : start + 1] != b"{":
        return SalvagedId(None, False)
    ident: RequestId | None = None
    has_method = has_outcome = False
    depth, pos = 1, start + 1
    count = raw.count
    for match in _STRING.finditer(raw, pos):
        found = match.start()
        if found != pos:
            depth += count(b"{", pos, found) + count(b"[", pos, found)
            depth -= count(b"}", pos, found) + count(b"]", pos, found)
        pos = match.end()
        if depth < 1 or pos - found == 1:
            break  # the object ended, or a string that never does (or is cut off) began
        if depth > 1:
            continue
        colon = _COLON.match(raw, pos)
        if colon is None:
            continue  # a value, not a member name
        name = match.group()
        if b"\\" in name:  # an escaped name (rare): decode it to compare
            try:
                name = b'"' + msgspec.json.decode(name, type=str).encode() + b'"'
            except (msgspec.DecodeError, msgspec.ValidationError, UnicodeEncodeError):
                continue
        if name == b'"id"':
            value = _ID_VALUE.match(raw, colon.end())
            if value is not None:
                try:
                    ident = _ID_DECODER.decode(value.group())
                except (msgspec.DecodeError, msgspec.ValidationError):
                    ident = None
        elif name == b'"method"':
            has_method = True
        elif name in (b'"result"', b'"error"'):
            has_outcome = True
    return SalvagedId(ident, has_outcome and not has_method)
