"""What the ASGI applications of this package (the Streamable HTTP server, the legacy HTTP+SSE
server) share: the ASGI types and the lifespan protocol."""

from __future__ import annotations

import logging
from collections.abc import Awaitable, Callable, MutableMapping
from contextlib import AbstractAsyncContextManager
from typing import Any

Scope = MutableMapping[str, Any]
Message = MutableMapping[str, Any]
Receive = Callable[[], Awaitable[Message]]
Send = Callable[[Message], Awaitable[None]]
Headers = list[tuple[bytes, bytes]]


async def lifespan(
    run: Callable[[], AbstractAsyncContextManager[object]],
    receive: Receive,
    send: Send,
    *,
    check_startup: bool,
    log: logging.Logger | None,
) -> None:
    """Answer an ASGI ``lifespan`` connection: ``run()`` is entered at startup and left at
    shutdown; a failure of either is reported to the host (and logged to ``log``, if given).
    With ``check_startup``, a first message other than ``lifespan.startup`` ends it at once."""
    message = await receive()
    if check_startup and message["type"] != "lifespan.startup":
        return
    started = False
    try:
        async with run():
            await send({"type": "lifespan.startup.complete"})
            started = True
            while (await receive())["type"] != "lifespan.shutdown":
                pass
    except Exception as exc:
        if log is not None:
            log.exception("lifespan failed")
        kind = "lifespan.shutdown.failed" if started else "lifespan.startup.failed"
        await send({"type": kind, "message": str(exc)})
        return
    await send({"type": "lifespan.shutdown.complete"})
