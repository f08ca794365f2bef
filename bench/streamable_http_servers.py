"""The servers of ``bench/streamable_http.py``: one ASGI app per implementation and mode, each run
under uvicorn in a process of its own.

    python bench/streamable_http_servers.py IMPL MODE --port PORT [--http auto|h11|httptools]
        [--loop auto|asyncio|uvloop]

IMPL is one of:

* ``mcpbind``: ``examples/echo_server.py``'s ``build()`` served by mcpbind's ``StreamableHTTPApp``;
* ``official-lowlevel``: ``bench/official_echo_server.py``'s ``build()`` (the official SDK's
  low-level ``Server``) served by its own ``streamable_http_app()`` (Starlette and the SDK's
  ``StreamableHTTPSessionManager``);
* ``official-mcpserver``: the official SDK's decorator server (``MCPServer``, formerly FastMCP)
  with one ``@tool()`` ``echo(text: str) -> str``, served by its ``streamable_http_app()``;
* ``raw-floor``: ``bench/raw_floor.py``, a raw ASGI app of a few lines that decodes the body with msgspec and answers
  ``initialize`` and ``tools/call`` echo, notifications with 202: no sessions, no checks.

MODE is ``json`` (stateful, JSON responses), ``sse`` (stateful, each POST answered with an SSE
stream) or ``stateless`` (no sessions, JSON responses), which the 2025-11-25 requests are sent in;
or ``modern``, where every request is a 2026-07-28 one (no ``initialize``, no session: the version
and client capabilities in each request's ``_meta``), with JSON responses asked for
(``json_response``, as in ``json`` and ``stateless``), or ``modern-sse``, the same with each app's
defaults, where a server may answer with an SSE stream (the official SDK then runs the handler
beside a watcher that would switch the answer to SSE if the handler sent a notification). One app
serves both eras, whatever its ``stateless`` option says: a 2026-07-28 request never opens a
session. The floor has the one behaviour whatever the mode. Every app is served at ``/mcp`` with
each implementation's defaults otherwise, by uvicorn on 127.0.0.1 with one worker and no access
log (the equivalent of ``uvicorn --loop LOOP --http HTTP --no-access-log --workers 1``). ``auto``,
the default of both, is uvicorn's own default, which depends on what is installed: httptools if
importable, else h11; uvloop if importable, else asyncio. ``bench/streamable_http.py`` runs the
official SDK's servers in the official SDK's venv (``pip install mcp``) and mcpbind's in its own
interpreter (as ``pip install "mcpbind[http]"`` brings it), each with ``auto``.

The official servers need only ``mcp`` (and what it brings): the floor, which needs msgspec, is in
``bench/raw_floor.py``, imported for the floor alone.

FastMCP, the fourth server of the 2026-07-28 modes, is not served from here: it runs in its own
venv, by ``bench/fastmcp_echo_server.py --port``, under the same ``uvicorn.run`` call
(``serve`` below, which that script copies, as it cannot import this one: msgspec is not there).
"""

# This file and bench/streamable_http.py run as scripts, so their folder, bench/, comes first on
# sys.path; nothing in it shadows a library, but the repository root is needed to import
# bench.official_echo_server and examples.echo_server as modules.
from __future__ import annotations

import argparse
import sys
from collections.abc import Awaitable, Callable, MutableMapping
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

Scope = MutableMapping[str, Any]
Message = MutableMapping[str, Any]
Receive = Callable[[], Awaitable[Message]]
Send = Callable[[Message], Awaitable[None]]
ASGIApp = Callable[[Scope, Receive, Send], Awaitable[None]]

IMPLEMENTATIONS = ("mcpbind", "official-lowlevel", "official-mcpserver", "raw-floor")
MODES = ("json", "sse", "stateless", "modern", "modern-sse")
# The modes of 2026-07-28 requests: JSON responses asked for, or each app's defaults.
MODERN_MODES = ("modern", "modern-sse")
PATH = "/mcp"


# -- the implementations ---------------------------------------------------------------------------


def mcpbind_app(mode: str) -> ASGIApp:
    from examples.echo_server import build
    from mcpbind.transports.http.server import StreamableHTTPApp

    if mode == "modern":
        return StreamableHTTPApp(build(), path=PATH, json_response=True)
    if mode == "modern-sse":
        return StreamableHTTPApp(build(), path=PATH)
    return StreamableHTTPApp(build(), path=PATH, json_response=mode != "sse", stateless=mode == "stateless")


def official_options(mode: str) -> dict[str, Any]:
    """The options of the official SDK's ``streamable_http_app()`` for a mode. Its app sends every
    request whose ``MCP-Protocol-Version`` header is not a handshake version to its 2026-07-28
    entry, whatever ``stateless_http`` says; of the options, that entry reads ``json_response``."""
    if mode == "modern":
        return {"streamable_http_path": PATH, "json_response": True}
    if mode == "modern-sse":
        return {"streamable_http_path": PATH}
    return {
        "streamable_http_path": PATH,
        "json_response": mode != "sse",
        "stateless_http": mode == "stateless",
    }


def official_lowlevel_app(mode: str) -> ASGIApp:
    from bench.official_echo_server import build

    app: ASGIApp = build().streamable_http_app(**official_options(mode))
    return app


def official_mcpserver_app(mode: str) -> ASGIApp:
    from mcp.server.mcpserver import MCPServer

    # Its default log level (INFO) prints a line per session to stderr; WARNING keeps logging out
    # of the measurement, as for the other servers.
    server = MCPServer("official-mcpserver-echo", version="0.1.0", log_level="WARNING")

    @server.tool()
    async def echo(text: str) -> str:
        """Says the text back."""
        return text

    app: ASGIApp = server.streamable_http_app(**official_options(mode))
    return app


def build_app(implementation: str, mode: str) -> ASGIApp:
    if implementation == "mcpbind":
        return mcpbind_app(mode)
    if implementation == "official-lowlevel":
        return official_lowlevel_app(mode)
    if implementation == "official-mcpserver":
        return official_mcpserver_app(mode)
    from bench.raw_floor import raw_floor_app

    return raw_floor_app()


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("implementation", choices=IMPLEMENTATIONS)
    parser.add_argument("mode", choices=MODES)
    parser.add_argument("--port", type=int, required=True)
    parser.add_argument(
        "--http", choices=["auto", "h11", "httptools"], default="auto", help="uvicorn's HTTP parser"
    )
    parser.add_argument(
        "--loop", choices=["auto", "asyncio", "uvloop"], default="auto", help="uvicorn's loop"
    )
    args = parser.parse_args(argv)

    serve(build_app(args.implementation, args.mode), args.port, args.http, args.loop)


def serve(app: ASGIApp, port: int, http: str, loop: str) -> None:
    """How every server of the benchmark is run (bench/fastmcp_echo_server.py does the same)."""
    import uvicorn

    uvicorn.run(
        app,
        host="127.0.0.1",
        port=port,
        loop=loop,
        http=http,
        workers=1,
        access_log=False,
        log_level="warning",
        lifespan="on",
    )


if __name__ == "__main__":
    main()
