"""Pagination of list results on the server side: opaque cursors and pages (a client walks
them with :func:`mcpbind.client.pages.all_pages`).

A cursor is opaque to clients (the spec says they must not parse it); here it is the
URL-safe base64 of ``o:<offset>``. A cursor that does not decode, or points past the end, is
answered with ``-32602`` as the spec asks.
"""

from __future__ import annotations

import base64
import binascii
from collections.abc import Sequence
from typing import TypeVar

from msgspec import UNSET, UnsetType

from mcpbind.protocol.errors import INVALID_PARAMS, McpError

__all__ = ["DEFAULT_PAGE_SIZE", "Page", "decode_cursor", "encode_cursor", "paginate"]

T = TypeVar("T")
DEFAULT_PAGE_SIZE = 100
_PREFIX = b"o:"


def encode_cursor(offset: int) -> str:
    return base64.urlsafe_b64encode(_PREFIX + str(offset).encode()).decode().rstrip("=")


def decode_cursor(cursor: str) -> int:
    """The offset a cursor stands for; :class:`McpError` (-32602) for anything else."""
    try:
        raw = base64.urlsafe_b64decode(cursor + "=" * (-len(cursor) % 4))
    except (binascii.Error, ValueError):
        raise McpError(INVALID_PARAMS, f"Invalid cursor: {cursor!r}") from None
    digits = raw[len(_PREFIX) :]
    # (bytes: isdigit() takes ASCII digits only; int() refuses over 4,300 of them)
    if not raw.startswith(_PREFIX) or not digits.isdigit() or len(digits) > 18:
        raise McpError(INVALID_PARAMS, f"Invalid cursor: {cursor!r}")
    return int(digits)


class Page(tuple[list[T], "str | UnsetType"]):
    """``(items, next_cursor)``; ``next_cursor`` is ``UNSET`` on the last page."""

    __slots__ = ()

    @property
    def items(self) -> list[T]:
        return self[0]

    @property
    def next_cursor(self) -> str | UnsetType:
        return self[1]


def paginate(
    items: Sequence[T], cursor: str | UnsetType | None, page_size: int = DEFAULT_PAGE_SIZE
) -> Page[T]:
    """The page of ``items`` that ``cursor`` (absent: the first) points at."""
    if page_size < 1:
        raise ValueError("page_size must be at least 1")
    offset = 0 if cursor is None or isinstance(cursor, UnsetType) else decode_cursor(cursor)
    if offset > len(items) or (offset == len(items) and offset > 0):
        raise McpError(INVALID_PARAMS, f"Invalid cursor: {cursor!r} (past the end of the list)")
    end = offset + page_size
    next_cursor: str | UnsetType = encode_cursor(end) if end < len(items) else UNSET
    return Page((list(items[offset:end]), next_cursor))
