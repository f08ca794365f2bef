"""MCP's stdio transport: newline-delimited JSON-RPC messages over a pair of byte streams.

Each message is one line of UTF-8 JSON ending in ``\\n``; messages never contain a newline
(a JSON encoder escapes them inside strings), so the newline is the whole framing. A trailing
``\\r`` is tolerated and empty lines are skipped. stderr carries logs, never messages.

The package, bottom to top:

* :mod:`.framing`: :class:`LineFramer`, the sans-io framing, bytes chunks in, lines out, with
  a size limit that never buffers an oversized line.
* :mod:`.fdio` (and its thread fallback :mod:`.fdthreads`): byte streams over raw file
  descriptors, polled by the event loop (``pwritev2``/``RWF_NOWAIT``, an asyncio reader watch)
  or served by daemon threads; every platform and library capability probe is there.
* :mod:`.stream`: :class:`StdioTransport`, a :class:`~mcpbind.transports.base.Transport` over
  any anyio ``ByteReceiveStream`` / ``ByteSendStream`` pair, and
  :func:`stdio_server_transport`, the one over this process's own stdin and stdout.
* :mod:`.process`: :func:`spawn_stdio_server` starts a server process and talks to it over its
  stdin and stdout (:class:`StdioClientTransport`), with a bounded, cancellation-proof
  shutdown (close stdin, SIGTERM, SIGKILL, reap).

Everything public is importable from here (:mod:`.process`, a client's, only when asked for:
a stdio server does not load it).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from mcpbind.transports.stdio.framing import LineFramer
from mcpbind.transports.stdio.stream import StdioTransport, stdio_server_transport

if TYPE_CHECKING:
    from mcpbind.transports.stdio.process import StdioClientTransport, spawn_stdio_server

__all__ = [
    "LineFramer",
    "StdioClientTransport",
    "StdioTransport",
    "spawn_stdio_server",
    "stdio_server_transport",
]


def __getattr__(name: str) -> Any:
    if name in ("StdioClientTransport", "spawn_stdio_server"):
        from mcpbind.transports.stdio import process

        return getattr(process, name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
