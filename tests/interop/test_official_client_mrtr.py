"""The official MCP Python SDK's client drives an mcpbind stdio server whose tool asks the
client for input (tests/interop/mrtr_server.py): in 2026-07-28 by multi round-trip requests
(the client answers the ``InputRequiredResult`` and retries), in 2025-11-25 by requests sent
mid-call; the same handler serves both."""

from __future__ import annotations

import os
import sys
from pathlib import Path
from typing import Any

import mcp
import mcp_types
import pytest
from mcp.client.client import Client

import mcpbind

pytestmark = pytest.mark.anyio

SERVER = Path(__file__).with_name("mrtr_server.py")


def child_env() -> dict[str, str]:
    """PYTHONPATH for the child to import mcpbind as this process does."""
    roots = dict.fromkeys(str(Path(entry).resolve().parent) for entry in mcpbind.__path__)
    inherited = os.environ.get("PYTHONPATH")
    return {"PYTHONPATH": os.pathsep.join([*roots, *([inherited] if inherited else [])])}


@pytest.mark.parametrize(("mode", "version"), [("2026-07-28", "2026-07-28"), ("legacy", "2025-11-25")])
@pytest.mark.parametrize("server_backend", ["asyncio", "trio"])
async def test_the_official_client_answers_a_tool_that_asks_twice(
    mode: str, version: str, server_backend: str
) -> None:
    asked: list[str] = []

    async def elicit(context: Any, params: Any) -> mcp_types.ElicitResult:
        asked.append(params.message)
        return mcp_types.ElicitResult(action="accept", content={"name": "Ada"})

    async def sample(context: Any, params: Any) -> mcp_types.CreateMessageResult:
        asked.append(params.messages[0].content.text)
        return mcp_types.CreateMessageResult(
            role="assistant", content=mcp_types.TextContent(type="text", text="Salut Ada"), model="m1"
        )

    params = mcp.StdioServerParameters(
        command=sys.executable, args=[str(SERVER), "--backend", server_backend], env=child_env()
    )
    async with Client(params, mode=mode, elicitation_callback=elicit, sampling_callback=sample) as client:
        result = await client.call_tool("greet", {"language": "fr"})
    assert not result.is_error
    assert [c.text for c in result.content if isinstance(c, mcp_types.TextContent)] == [
        f"Salut Ada (model m1, protocol {version})"
    ]
    assert asked == ["Your name?", "Greet Ada in fr"]
