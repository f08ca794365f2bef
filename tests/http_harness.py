"""Serve an ASGI application on 127.0.0.1 inside a test, under uvicorn or hypercorn.

The listening socket is bound here (port 0, loopback only) and handed to the server, so the
test knows the port before the server starts and no other test can take it. The server runs in
the test's own event loop (uvicorn only on asyncio; hypercorn on asyncio and trio) with ASGI
lifespan on, and is shut down when the block ends.
"""

from __future__ import annotations

import socket
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Any, Literal

import anyio
import sniffio

ServerName = Literal["uvicorn", "hypercorn"]


def loopback_socket() -> socket.socket:
    # IPPROTO_TCP spelled out: asyncio turns Nagle off (TCP_NODELAY) only on sockets whose
    # proto says TCP, and accepted sockets inherit 0 otherwise (40 ms per keep-alive request).
    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM, socket.IPPROTO_TCP)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    sock.bind(("127.0.0.1", 0))
    sock.listen(128)
    sock.setblocking(False)
    return sock


def default_server() -> ServerName:
    """uvicorn where it can run (asyncio), hypercorn on trio."""
    return "uvicorn" if sniffio.current_async_library() == "asyncio" else "hypercorn"


@asynccontextmanager
async def serve_asgi(
    app: Any, server: ServerName | None = None, sock: socket.socket | None = None
) -> AsyncIterator[str]:
    """Run ``app`` until the block ends; yields its base URL, ``http://127.0.0.1:PORT``.
    ``sock``: a socket of :func:`loopback_socket` to serve on (for an app that must know its own
    URL before it is made); by default one is made here. It is closed when the block ends."""
    server = server or default_server()
    sock = sock if sock is not None else loopback_socket()
    port = sock.getsockname()[1]
    try:
        async with anyio.create_task_group() as tg:
            stop = anyio.Event()
            if server == "uvicorn":
                import uvicorn

                instance = uvicorn.Server(
                    uvicorn.Config(app, lifespan="on", log_level="warning", access_log=False)
                )
                tg.start_soon(instance.serve, [sock])
                with anyio.fail_after(10):
                    while not instance.started:
                        await anyio.sleep(0.01)
                try:
                    yield f"http://127.0.0.1:{port}"
                finally:
                    instance.should_exit = True
            else:
                from hypercorn.config import Config as HypercornConfig

                config = HypercornConfig()
                # hypercorn owns (and closes) the descriptor it is given.
                config.bind = [f"fd://{sock.detach()}"]
                config.accesslog = None
                config.errorlog = None
                config.graceful_timeout = 1.0
                # hypercorn closes a connection whose request has not arrived keep_alive_timeout
                # (5 s) after it was accepted. Client and server share one event loop here; on a
                # busy 2-core machine, with a hundred connections opening at once, the loop can
                # be that late, and the client then sees "Server disconnected without sending a
                # response" for a request the server never read.
                config.keep_alive_timeout = 60.0
                if sniffio.current_async_library() == "trio":
                    from hypercorn.trio import serve as trio_serve

                    await tg.start(_hypercorn_trio, trio_serve, app, config, stop)
                else:
                    from hypercorn.asyncio import serve as asyncio_serve

                    tg.start_soon(_hypercorn_asyncio, asyncio_serve, app, config, stop)
                    await _wait_listening(port)
                try:
                    yield f"http://127.0.0.1:{port}"
                finally:
                    stop.set()
    finally:
        sock.close()


async def _hypercorn_trio(
    serve: Any, app: Any, config: Any, stop: anyio.Event, *, task_status: Any = anyio.TASK_STATUS_IGNORED
) -> None:
    await serve(app, config, shutdown_trigger=stop.wait, task_status=task_status)


async def _hypercorn_asyncio(serve: Any, app: Any, config: Any, stop: anyio.Event) -> None:
    await serve(app, config, shutdown_trigger=stop.wait)


async def _wait_listening(port: int) -> None:
    with anyio.fail_after(10):
        while True:
            try:
                stream = await anyio.connect_tcp("127.0.0.1", port)
            except OSError:
                await anyio.sleep(0.01)
            else:
                await stream.aclose()
                return
