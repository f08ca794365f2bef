"""A server for the scale-out tests that says which process answers: ``pid`` returns the
process id of the worker that ran it; ``ask`` asks the client for a name (elicitation: over
2026-07-28, a multi round-trip request whose retry may reach another worker); ``hang`` {path}
writes the process id to the file ``path`` and never returns (a request in flight when its
worker is killed); ``change`` announces a tools-list change (heard by every worker's sessions).

When the file that ``MCPBIND_TEST_BROKEN`` names exists, loading this module fails (as a server
file broken after its workers started would): the workers started from then on fail to start.
"""

from __future__ import annotations

import os
from pathlib import Path

import anyio

from mcpbind import types
from mcpbind.runtime.context import RequestContext
from mcpbind.server.server import Server

broken = os.environ.get("MCPBIND_TEST_BROKEN")
if broken and Path(broken).exists():
    raise RuntimeError("this server is broken now")

server = Server("pid-server", "1.0")


@server.tool()
def pid() -> int:
    """The id of the process answering."""
    return os.getpid()


@server.tool()
def echo(text: str) -> str:
    """Says the text back."""
    return text


@server.tool()
async def ask(ctx: RequestContext) -> str:
    """Greets whoever the client says it is."""
    schema = types.ElicitRequestFormParamsRequestedSchema(properties={"name": types.StringSchema()})
    answer = await ctx.elicit(types.ElicitRequestFormParams(message="Name?", requested_schema=schema))
    name = answer.content.get("name") if isinstance(answer, types.ElicitResult) and answer.content else None
    return f"hello {name}"


@server.tool()
async def hang(path: str) -> str:
    """Writes this process's id to ``path``, then waits forever."""
    Path(path).write_text(str(os.getpid()))
    await anyio.sleep_forever()
    return "never"


@server.tool()
async def change() -> int:
    """Announces a tools-list change; the id of the process answering."""
    await server.tools_changed()
    return os.getpid()
