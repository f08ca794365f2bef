"""The echo server of ``examples/echo_server.py``, written with FastMCP (the ``fastmcp`` package).

One ``@mcp.tool``, ``echo`` {text}, an ``async def`` that gives the text back; ``--tools N``
registers N more (``tool_0`` ... ``tool_{N-1}``, each echoing too). The tools' schemas are the ones
FastMCP derives from the function's signature. Served over stdio by ``FastMCP.run()`` without its
start-up banner, with its log level at WARNING (its INFO start-up line and the banner go to stderr).

    python bench/fastmcp_echo_server.py [--tools N]
    python bench/fastmcp_echo_server.py --port PORT [--mode modern|modern-sse] [--http auto|h11|httptools]
        [--loop auto|asyncio|uvloop]

With ``--port``, its Streamable HTTP app (``FastMCP.http_app()``, at ``/mcp``, its defaults
otherwise; ``json_response=True`` for ``modern``, as in the other servers' ``modern`` mode) is served for ``bench/streamable_http.py``
by the same ``uvicorn.run`` call as the other servers there (``bench/streamable_http_servers.py``):
127.0.0.1, one worker, no access log, uvicorn's parser and loop as ``--http`` and ``--loop`` say
(``auto``, the default: what its venv has).

Runs in FastMCP's venv (``.bench/venvs/fastmcp``, made by ``bench/peers.py``).
"""

# mypy: ignore-errors
# (This file runs in the peer's venv, where fastmcp is installed; the project's venv has no
# fastmcp, so mypy could not follow its imports.)

from __future__ import annotations

import argparse
import os

# Its default (INFO) writes a start-up line to stderr; WARNING, as for the official decorator server.
os.environ.setdefault("FASTMCP_LOG_LEVEL", "WARNING")

from fastmcp import FastMCP  # reads FASTMCP_LOG_LEVEL when imported


def build(extra_tools: int = 0) -> FastMCP:
    server = FastMCP("fastmcp-echo", version="0.1.0")

    @server.tool(description="Says the text back.")
    async def echo(text: str) -> str:
        return text

    for i in range(extra_tools):
        server.tool(echo, name=f"tool_{i}", description="Says the text back.")
    return server


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--tools", type=int, default=0, help="extra tools to register")
    parser.add_argument("--port", type=int, help="serve Streamable HTTP on 127.0.0.1:PORT, not stdio")
    parser.add_argument("--mode", choices=["modern", "modern-sse"], default="modern", help="with --port")
    parser.add_argument(
        "--http", choices=["auto", "h11", "httptools"], default="auto", help="uvicorn's HTTP parser"
    )
    parser.add_argument(
        "--loop", choices=["auto", "asyncio", "uvloop"], default="auto", help="uvicorn's loop"
    )
    args = parser.parse_args()
    if args.port is None:
        build(args.tools).run("stdio", show_banner=False)
        return
    import uvicorn

    # modern-sse: FastMCP's setting (FASTMCP_JSON_RESPONSE, default off), as its users get it.
    app = build(args.tools).http_app(path="/mcp", json_response=True if args.mode == "modern" else None)
    uvicorn.run(
        app,
        host="127.0.0.1",
        port=args.port,
        loop=args.loop,
        http=args.http,
        workers=1,
        access_log=False,
        log_level="warning",
        lifespan="on",
    )


if __name__ == "__main__":
    main()
