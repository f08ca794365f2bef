"""A README-style stdio server for tests/runtime/test_session_lifecycle.py.

    python tests/peers/readme_server.py [asyncio|trio]        # server.run_stdio_sync(backend)
    python -m mcpbind serve tests/peers/readme_server.py --backend asyncio|trio

``MCPBIND_TEST_GRACE`` (seconds), when set, is the server's ``shutdown_grace_period``.

The context variable ``user`` is set to ``"root"`` at import, in the context the server starts
in. Tools:

* ``nap`` {seconds}: sleeps, then answers ``"rested"``.
* ``become`` {name, pause}: answers what ``user`` was, after setting it to ``name`` (and then
  sleeping a moment if ``pause``).

It exits when stdin ends.
"""

from __future__ import annotations

import contextvars
import os
import sys

import anyio

from mcpbind.server.server import Server

user: contextvars.ContextVar[str] = contextvars.ContextVar("user", default="nobody")
user.set("root")

server = Server("readme", "1.0")
if "MCPBIND_TEST_GRACE" in os.environ:
    server.shutdown_grace_period = float(os.environ["MCPBIND_TEST_GRACE"])


@server.tool()
async def nap(seconds: float) -> str:
    """Sleeps, then answers."""
    await anyio.sleep(seconds)
    return "rested"


@server.tool()
async def become(name: str, pause: bool = False) -> str:
    """Sets ``user`` to ``name``; answers what it was before."""
    before = user.get()
    user.set(name)
    if pause:
        await anyio.sleep(0.01)
    return before


if __name__ == "__main__":
    server.run_stdio_sync(sys.argv[1] if len(sys.argv) > 1 else "asyncio")
