"""A stdio server for the proxy's fault tests: ``die`` ends the process mid-call, ``pid`` tells
which process answers, ``add`` adds.

    python tests/proxy/dying_server.py
"""

from __future__ import annotations

import os

from mcpbind import Server
from mcpbind.versions import HANDSHAKE_VERSIONS

server = Server("dying", "1.0", versions=tuple(HANDSHAKE_VERSIONS))


@server.tool()
def add(a: int, b: int) -> int:
    return a + b


@server.tool()
def pid() -> int:
    return os.getpid()


@server.tool()
async def die() -> str:
    os._exit(1)


if __name__ == "__main__":
    server.run_stdio_sync()
