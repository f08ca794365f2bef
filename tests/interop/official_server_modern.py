"""A server written with the official MCP Python SDK (``MCPServer``) for mcpbind's client to
drive at MCP 2026-07-28, over stdio (no argument) or Streamable HTTP (``http PORT``, on
127.0.0.1). The SDK serves 2026-07-28 and the handshake versions on the same endpoint, the era
chosen by what the client sends first.

Tools:

* ``add`` {a, b}: their sum.
* ``ask_name``: elicitation by a multi round-trip request (an ``InputRequiredResult``, then the
  answer from ``ctx.input_responses`` on the retry, checked against the echoed state).
* ``summarize`` {text}: sampling, the same way; ``where``: roots, the same way.
* ``interview``: two rounds, elicitation then sampling, for the round limit.
* ``regional`` {region, query}: ``region`` is mirrored into ``Mcp-Param-Region``.
* ``change``: announces a tools-list change and an update of ``data://watched``.
* ``shout`` {message}: logs the message at ``warning``, then says it louder.
"""

from __future__ import annotations

import sys
import warnings
from typing import Annotated, Any

from mcp.server.mcpserver import Context, MCPServer
from mcp.shared.exceptions import MCPDeprecationWarning
from mcp_types import (
    CreateMessageRequest,
    CreateMessageRequestParams,
    ElicitRequest,
    ElicitRequestFormParams,
    InputRequiredResult,
    ListRootsRequest,
    SamplingMessage,
    TextContent,
)
from pydantic import Field

warnings.filterwarnings("ignore", category=MCPDeprecationWarning)

server: MCPServer[Any] = MCPServer(
    "official-modern", version="2.6.0", instructions="Ask, summarize, change.", log_level="DEBUG"
)


def _answer(ctx: Context, key: str) -> Any:
    answer: Any = (ctx.input_responses or {}).get(key)
    return answer.model_dump(by_alias=True) if hasattr(answer, "model_dump") else answer


@server.tool(description="Adds two integers.")
def add(a: int, b: int) -> int:
    return a + b


@server.tool(description="Asks the user's name.")
async def ask_name(ctx: Context) -> Any:
    answer = _answer(ctx, "name")
    if answer is None:
        schema = {"type": "object", "properties": {"name": {"type": "string"}}, "required": ["name"]}
        ask = ElicitRequest(
            params=ElicitRequestFormParams(message="What is your name?", requested_schema=schema)
        )
        return InputRequiredResult(input_requests={"name": ask}, request_state="asked-name")
    if ctx.request_state != "asked-name":
        return f"bad state {ctx.request_state!r}"
    return f"hello {answer['content']['name']} ({answer['action']})"


@server.tool(description="Asks the client's model for a summary.")
async def summarize(text: str, ctx: Context) -> Any:
    answer = _answer(ctx, "summary")
    if answer is None:
        message = SamplingMessage(role="user", content=TextContent(type="text", text=f"Summarize: {text}"))
        ask = CreateMessageRequest(params=CreateMessageRequestParams(messages=[message], max_tokens=50))
        return InputRequiredResult(input_requests={"summary": ask})
    return f"summary: {answer['content']['text']} by {answer['model']}"


@server.tool(description="Lists the client's roots.")
async def where(ctx: Context) -> Any:
    answer = _answer(ctx, "roots")
    if answer is None:
        return InputRequiredResult(input_requests={"roots": ListRootsRequest()})
    return ", ".join(str(root["uri"]) for root in answer["roots"])


@server.tool(description="Never has enough input.")
async def interview(ctx: Context) -> Any:
    rounds = int(ctx.request_state or "0") + 1
    schema = {"type": "object", "properties": {"answer": {"type": "string"}}}
    ask = ElicitRequest(
        params=ElicitRequestFormParams(message=f"Question {rounds}?", requested_schema=schema)
    )
    return InputRequiredResult(input_requests={f"q{rounds}": ask}, request_state=str(rounds))


@server.tool(description="Runs a query in a region.")
def regional(region: Annotated[str, Field(json_schema_extra={"x-mcp-header": "Region"})], query: str) -> str:
    return f"{query} in {region}"


@server.tool(description="Announces changes.")
async def change(ctx: Context) -> str:
    await ctx.notify_tools_changed()
    await ctx.notify_resource_updated("data://watched")
    return "changed"


@server.tool(description="Logs the message, then says it louder.")
async def shout(message: str, ctx: Context) -> str:
    await ctx.log("warning", message, logger_name="official")
    return message.upper()


@server.resource("data://watched")
def watched() -> str:
    return "watched"


@server.prompt(description="Greets someone.")
def greet(name: str) -> str:
    return f"Say hello to {name}"


if __name__ == "__main__":
    if sys.argv[1:2] == ["http"]:
        server.run("streamable-http", host="127.0.0.1", port=int(sys.argv[2]))
    else:
        server.run("stdio")
