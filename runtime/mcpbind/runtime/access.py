"""The verified access token of the HTTP request being served, as a context variable: the
resource server's ASGI middleware sets it, and a handler reads it as ``ctx.access_token`` (a
handler runs in a copy of the context of the task that hands its message to the session)."""

from __future__ import annotations

from contextvars import ContextVar
from typing import TYPE_CHECKING, Final

if TYPE_CHECKING:  # (a server that is not protected never loads it)
    from mcpbind.oauth.access_token import AccessToken

__all__ = ["current_access_token"]

current_access_token: Final[ContextVar[AccessToken | None]] = ContextVar("mcpbind_access_token", default=None)
