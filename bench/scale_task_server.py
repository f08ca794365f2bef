"""The server ``bench/scale.py`` measures Redis memory with: ``mcpbind serve
bench/scale_task_server.py --transport http --store redis://...``.

It has ``echo`` {text} and ``work`` {n}, a tool that runs as a task when the client can follow
one (``task=True``) and ends at once with ``n`` as its result: what a finished task leaves in
the server's task store until its time to live runs out. The tasks are the server's default
:class:`~mcpbind.server.tasks.TaskSupport`, so they live where a server started with ``--store``
keeps them.
"""

from __future__ import annotations

from mcpbind.server.server import Server

server = Server("bench-scale-tasks", "0.1.0")


@server.tool()
async def echo(text: str) -> str:
    """Says the text back."""
    return text


@server.tool(task=True)
async def work(n: int) -> int:
    """Ends at once with ``n``; run as a task when the client can follow one."""
    return n
