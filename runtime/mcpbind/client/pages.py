"""Walking every page of a paginated list method from the client side, following
``nextCursor`` (the server side, cursors and pages, is :mod:`mcpbind.server.pagination`)."""

from __future__ import annotations

from collections.abc import AsyncIterator, Awaitable, Callable
from typing import Protocol, TypeVar

from msgspec import UnsetType

from mcpbind.protocol.errors import INVALID_PARAMS, McpError

__all__ = ["all_pages"]


class _Paged(Protocol):
    @property
    def next_cursor(self) -> str | UnsetType: ...


P = TypeVar("P", bound=_Paged)


async def all_pages(
    fetch: Callable[[str | None], Awaitable[P]], *, max_pages: int = 10_000
) -> AsyncIterator[P]:
    """Every page of a list method, following ``nextCursor``: ``fetch(cursor)`` gets one page
    (for example ``server.list_tools``). Stops after ``max_pages`` as a guard against a
    server that never stops handing out cursors."""
    cursor: str | None = None
    for _ in range(max_pages):
        page = await fetch(cursor)
        yield page
        if isinstance(page.next_cursor, UnsetType) or not page.next_cursor:
            return
        cursor = page.next_cursor
    raise McpError(INVALID_PARAMS, f"More than {max_pages} pages: giving up")
