"""The echo server of ``examples/echo_server.py``, written with the official SDK's decorator server.

``mcp.server.mcpserver.MCPServer`` (what the SDK called FastMCP before 2.x): one ``@tool()``,
``echo`` {text}, an ``async def`` that gives the text back; ``--tools N`` registers N more
(``tool_0`` ... ``tool_{N-1}``, each echoing too). The tools' schemas are the ones the SDK derives
from the function's signature, as a user of the decorator gets them. Its log level is WARNING:
at its default (INFO) it writes a line to stderr for every request it handles.

    python bench/official_decorator_echo_server.py [--tools N]

Runs in the official SDK's venv (``.bench/venvs/official``, made by ``bench/peers.py``).
"""

# mypy: ignore-errors
# (This file runs in the peer's venv; it is kept out of mypy's strict pass so that the project's
# typecheck does not depend on how the SDK types its decorators.)

from __future__ import annotations

import argparse

from mcp.server.mcpserver import MCPServer


def build(extra_tools: int = 0) -> MCPServer:
    server = MCPServer("official-decorator-echo", version="0.1.0", log_level="WARNING")

    @server.tool(description="Says the text back.")
    async def echo(text: str) -> str:
        return text

    for i in range(extra_tools):
        server.add_tool(echo, name=f"tool_{i}", description="Says the text back.")
    return server


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--tools", type=int, default=0, help="extra tools to register")
    args = parser.parse_args()
    build(args.tools).run("stdio")


if __name__ == "__main__":
    main()
