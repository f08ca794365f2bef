"""The server the interop tests run as three ``mcpbind serve --store`` processes behind nginx
(tests/fleet.py): every tool says which process answered, so that a test sees its session
cross workers.

Tools (each result is ``"TEXT (pid PID)"``):

* ``pid``: nothing more.
* ``summarize`` {text}: asks the client's model to summarize the text (sampling).
* ``greet``: asks the user's name (elicitation, a form with one string ``name``).
* ``count`` {steps}: reports progress at each step.
* ``change``: announces a tools-list change and an update of ``test://watched``.
* ``double`` {n} (a task when the client can follow one): ``"doubled 2n"``.
* ``greet_later`` (a task when the client can follow one): asks the user's name
  (elicitation; in a task, the task waits ``input_required`` for the answer).
"""

from __future__ import annotations

import os

from mcpbind import types
from mcpbind.runtime.context import RequestContext
from mcpbind.server.server import Server
from mcpbind.server.tasks import TaskSupport

WATCHED = "test://watched"

server = Server("mcpbind-fleet", "1.0", tasks=TaskSupport(poll_interval_ms=20))


def _answer(text: str) -> str:
    return f"{text} (pid {os.getpid()})"


@server.tool()
def pid() -> str:
    """Which process answers."""
    return _answer("here")


@server.tool()
async def summarize(text: str, ctx: RequestContext) -> str:
    """Asks the client's model to summarize the text."""
    message = types.SamplingMessage(role="user", content=types.TextContent(text=f"Summarize: {text}"))
    result = await ctx.create_message(types.CreateMessageRequestParams(messages=[message], max_tokens=50))
    assert isinstance(result, types.CreateMessageResult)
    content = result.content
    return _answer(content.text if isinstance(content, types.TextContent) else "?")


async def _ask_name(ctx: RequestContext) -> str:
    schema = types.ElicitRequestFormParamsRequestedSchema(properties={"name": types.StringSchema()})
    answer = await ctx.elicit(types.ElicitRequestFormParams(message="Your name?", requested_schema=schema))
    name = answer.content.get("name") if isinstance(answer, types.ElicitResult) and answer.content else None
    return _answer(f"hello {name}")


@server.tool()
async def greet(ctx: RequestContext) -> str:
    """Asks the user's name."""
    return await _ask_name(ctx)


@server.tool(task=True)
async def double(n: int) -> str:
    """Doubles ``n`` (as a task when the client can follow one)."""
    return _answer(f"doubled {2 * n}")


@server.tool(task=True)
async def greet_later(ctx: RequestContext) -> str:
    """Asks the user's name (as a task when the client can follow one)."""
    return await _ask_name(ctx)


@server.tool()
async def count(steps: int, ctx: RequestContext) -> str:
    """Reports progress at each step."""
    for step in range(1, steps + 1):
        await ctx.report_progress(step, steps, f"step {step}")
    return _answer(f"counted {steps}")


@server.tool()
async def change() -> str:
    """Announces a tools-list change and an update of test://watched (heard on every worker)."""
    await server.tools_changed()
    await server.resource_updated(WATCHED)
    return _answer("changed")


@server.resource(WATCHED, mime_type="text/plain", description="A resource to subscribe to")
def watched() -> str:
    return "watched"
