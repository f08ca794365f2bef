"""Noticing that an HTTP client went away, once its request body was read: ASGI's ``receive()``
then returns nothing but ``http.disconnect``, when the client disconnects (or, for some servers,
once the response is complete)."""

from __future__ import annotations

import anyio

from mcpbind.transports.http._asgi import Receive

__all__ = ["Flag", "cancel_on_disconnect", "wait_disconnect"]


class Flag:
    """A plain boolean to share between tasks (``set`` once the client is gone)."""

    __slots__ = ("set",)

    def __init__(self) -> None:
        self.set = False


async def wait_disconnect(receive: Receive) -> None:
    """Until ``receive()`` says ``http.disconnect``."""
    while (await receive())["type"] != "http.disconnect":
        pass


async def cancel_on_disconnect(receive: Receive, scope: anyio.CancelScope, gone: Flag | None = None) -> None:
    """Cancel ``scope`` when the client disconnects (setting ``gone``, if given)."""
    while (await receive())["type"] != "http.disconnect":
        pass
    if gone is not None:
        gone.set = True
    scope.cancel()
