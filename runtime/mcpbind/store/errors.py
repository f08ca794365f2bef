"""The one error of a store: :class:`StoreUnavailable`."""

from __future__ import annotations

from mcpbind.protocol.errors import INTERNAL_ERROR, McpError

__all__ = ["StoreUnavailable"]


class StoreUnavailable(McpError):
    """The store could not be reached or did not answer in time (Redis stopped, restarting,
    unreachable, overloaded). ``detail`` says which store and what happened, never a password.
    The operation may be tried again: a store recovers by itself when its backend is back.

    It is a :class:`~mcpbind.protocol.errors.McpError` (``INTERNAL_ERROR``, the message
    ``Service unavailable: DETAIL``): raised in a handler, it is answered as the protocol error
    it is, like any other (not as a bug of the handler, nor as a tool's failure); over HTTP,
    where a request needs the store before it reaches a handler, the app answers 503 with the
    same error."""

    def __init__(self, detail: str) -> None:
        super().__init__(INTERNAL_ERROR, f"Service unavailable: {detail}")
        self.detail = detail

    def __reduce__(self) -> tuple[type[StoreUnavailable], tuple[str]]:
        return type(self), (self.detail,)
