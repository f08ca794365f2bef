"""The values of the headers a Streamable HTTP request mirrors from its body (MCP 2026-07-28:
``Mcp-Name``, ``Mcp-Param-{Name}``): plain visible ASCII as is, anything else as the UTF-8
bytes in Base64 between the markers ``=?base64?`` and ``?=``.

:func:`encode_header_value` is what a client sends; :func:`decode_header_value` what a server
compares with the body (``None`` for a value no conforming client sends).
"""

from __future__ import annotations

import base64
import binascii
from typing import Final

__all__ = ["PREFIX", "SUFFIX", "decode_header_value", "encode_header_value"]

PREFIX: Final = b"=?base64?"
SUFFIX: Final = b"?="

# The bytes of a plain value: visible ASCII, space and horizontal tab (RFC 9110 field values).
_PLAIN: Final = bytes(range(0x20, 0x7F)) + b"\t"


def _is_plain(value: bytes) -> bool:
    return not value.translate(None, _PLAIN)  # (nothing left once they are deleted)


def encode_header_value(value: str) -> str:
    """``value`` as a header value: as is when it is plain visible ASCII without surrounding
    white space and does not look like an encoded value, else in the Base64 form."""
    raw = value.encode()
    if (
        value.isascii()
        and _is_plain(raw)
        and value == value.strip(" \t")
        and not (raw.startswith(PREFIX) and raw.endswith(SUFFIX))
    ):
        return value
    return (PREFIX + base64.b64encode(raw) + SUFFIX).decode("ascii")


def decode_header_value(raw: bytes) -> str | None:
    """The value a header carries (as an ASGI server gives it: bytes, surrounding white space
    removed), or ``None`` when no conforming client would send it: a plain value with bytes
    outside visible ASCII, space and tab, or an encoded one whose Base64 is malformed (or not
    canonical) or whose bytes are not UTF-8."""
    if raw.startswith(PREFIX) and raw.endswith(SUFFIX) and len(raw) >= len(PREFIX) + len(SUFFIX):
        payload = raw[len(PREFIX) : len(raw) - len(SUFFIX)]
        try:
            decoded = base64.b64decode(payload, validate=True)
        except (binascii.Error, ValueError):
            return None
        if base64.b64encode(decoded) != payload:  # (trailing bits set: not what an encoder makes)
            return None
        try:
            return decoded.decode()
        except UnicodeDecodeError:
            return None
    if not _is_plain(raw):
        return None
    return raw.decode("ascii")
