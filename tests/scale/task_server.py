"""A server for the task fail-over test: ``forever`` runs as a task until cancelled, its
worker vouching for it with a short lease (1 s), so that another worker soon reads a task of
a killed worker as failed."""

from __future__ import annotations

import anyio

from mcpbind.server.server import Server
from mcpbind.server.tasks import TaskSupport

server = Server("task-server", "1.0", tasks=TaskSupport(lease=1.0, poll_interval_ms=50))


@server.tool(task=True)
async def forever() -> int:
    """Runs until cancelled."""
    await anyio.sleep_forever()
    return 0
