"""The echo server of ``examples/echo_server.py``, written with FastMCP (the ``fastmcp`` package).

One ``@mcp.tool``, ``echo`` {text}, an ``async def`` that gives the text back; ``--tools N``
registers N more (``tool_0`` ... ``tool_{N-1}``, each echoing too). The tools' schemas are the ones
FastMCP derives from the function's signature. Served over stdio by ``FastMCP.run()`` without its
start-up banner, with its log level at WARNING (its INFO start-up line and the banner go to stderr).

    python bench/fastmcp_echo_server.py [--tools N]

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
    args = parser.parse_args()
    build(args.tools).run("stdio", show_banner=False)


if __name__ == "__main__":
    main()
