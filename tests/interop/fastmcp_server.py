"""A FastMCP server (fastmcp from PyPI, 2026-07-28 capable) for mcpbind's client to talk to, over stdio
(no argument) or Streamable HTTP (`http PORT`, on 127.0.0.1). Its sampling and elicitation tools
use FastMCP's multi round-trip pattern: they return an InputRequiredResult and read the answers
from `ctx.input_responses` when the client retries."""

from __future__ import annotations

import sys
from typing import Any

from fastmcp import Context, FastMCP
from mcp_types import (
    CreateMessageRequest,
    CreateMessageRequestParams,
    ElicitRequest,
    ElicitRequestFormParams,
    InputRequiredResult,
    SamplingMessage,
    TextContent,
)

app = FastMCP("fastmcp-peer", instructions="A FastMCP peer.")


@app.tool
def add(a: int, b: int) -> int:
    """Adds two numbers."""
    return a + b


def _answer(ctx: Context, key: str) -> Any:
    """The client's answer to the input request ``key``, as plain JSON data; None before it."""
    answer = (ctx.input_responses or {}).get(key)
    return None if answer is None else answer.model_dump(mode="json")


@app.tool
async def ask_name(ctx: Context) -> Any:
    """Asks the user's name (elicitation, through a multi round-trip request)."""
    answer = _answer(ctx, "name")
    if answer is None:
        schema = {"type": "object", "properties": {"name": {"type": "string"}}, "required": ["name"]}
        ask = ElicitRequest(
            params=ElicitRequestFormParams(message="What is your name?", requested_schema=schema)
        )
        return InputRequiredResult(input_requests={"name": ask})
    return f"hello {answer['content']['name']} ({answer['action']})"


@app.tool
async def summarize(text: str, ctx: Context) -> Any:
    """Asks the client's model for a summary (sampling, through a multi round-trip request)."""
    answer = _answer(ctx, "summary")
    if answer is None:
        message = SamplingMessage(role="user", content=TextContent(type="text", text=f"Summarize: {text}"))
        ask = CreateMessageRequest(params=CreateMessageRequestParams(messages=[message], max_tokens=50))
        return InputRequiredResult(input_requests={"summary": ask})
    return f"summary: {answer['content']['text']}"


@app.tool
async def count(n: int, ctx: Context) -> str:
    for i in range(1, n + 1):
        await ctx.report_progress(i, n)
        await ctx.info(f"step {i}")
    return "counted"


@app.resource("data://greeting")
def greeting() -> str:
    return "hello from fastmcp"


@app.prompt
def greet(name: str) -> str:
    return f"Say hello to {name}"


if __name__ == "__main__":
    if sys.argv[1:2] == ["http"]:
        app.run(transport="http", host="127.0.0.1", port=int(sys.argv[2]), show_banner=False)
    else:
        app.run(transport="stdio", show_banner=False)
