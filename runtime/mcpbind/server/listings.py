"""The pages of a server's listings (``tools/list``, ``prompts/list``, ``resources/list``,
``resources/templates/list``) encoded once and kept until what they list changes.

A page is kept as an :class:`~mcpbind.protocol.encoded.Encoded` result, which keeps its own
conversions for older protocol versions and the split a stateless answer is made from: a
listing asked again costs a lookup and one copy of its bytes into the response.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any, TypeVar

from msgspec import UnsetType

from mcpbind.protocol.encoded import Encoded
from mcpbind.server.pagination import decode_cursor, paginate

__all__ = ["Listings"]

T = TypeVar("T")
R = TypeVar("R")


class Listings:
    """Encoded pages by listing kind (``"tool"``, ``"prompt"``, ``"resource"``,
    ``"template"``) and offset, each with the number of items listed when it was made.

    :meth:`forget` drops a kind's pages when its set changes. A page is also made again when
    the number of items differs from when it was made (an item added to or removed from the
    server's dict in place) or the page size changed. Only the offsets of the cursors a page
    gives (multiples of the page size) are kept: at most one entry per page of each listing.
    """

    def __init__(self) -> None:
        self._pages: dict[tuple[str, int], tuple[int, int, Encoded[Any]]] = {}

    def forget(self, kind: str) -> None:
        """Drop the pages of ``kind``: what it lists changed."""
        for key in [key for key in self._pages if key[0] == kind]:
            del self._pages[key]

    def page(
        self,
        kind: str,
        count: int,
        items: Callable[[], Sequence[T]],
        cursor: str | UnsetType | None,
        page_size: int,
        make: Callable[[list[T], str | UnsetType], R],
    ) -> Encoded[R]:
        """The page of ``kind`` that ``cursor`` points at, encoded: the one kept if ``count``
        (the number of items now) and ``page_size`` are those it was made with, else made
        from ``items()`` with ``make(page_items, next_cursor)`` (and kept when its offset is
        one this side gives). :class:`~mcpbind.protocol.errors.McpError` (-32602) for a bad
        cursor, as :func:`~mcpbind.server.pagination.paginate` raises."""
        offset = 0 if cursor is None or isinstance(cursor, UnsetType) else decode_cursor(cursor)
        key = (kind, offset)
        kept = self._pages.get(key)
        if kept is not None and kept[0] == count and kept[1] == page_size:
            encoded: Encoded[R] = kept[2]
            return encoded
        page = paginate(items(), cursor, page_size)
        encoded = Encoded.of(make(page.items, page.next_cursor))
        if offset % page_size == 0:
            self._pages[key] = (count, page_size, encoded)
        return encoded
