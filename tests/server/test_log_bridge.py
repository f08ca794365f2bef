"""Python logging records forwarded to the client, from async tools and from sync ones in
worker threads, filtered by the client's level."""

from __future__ import annotations

import logging

import anyio
import pytest

from mcpbind.client.client import Client
from mcpbind.runtime.session import RequestContext
from mcpbind.schema import v2025_11_25 as types
from mcpbind.server.log_bridge import forward_logging, mcp_level
from mcpbind.server.server import Server
from mcpbind.versions import HANDSHAKE_VERSIONS
from tests.harness import connected

pytestmark = pytest.mark.anyio


def test_levels() -> None:
    assert [mcp_level(n) for n in (5, 10, 20, 30, 40, 50, 60)] == [
        "debug", "debug", "info", "warning", "error", "critical", "critical",
    ]  # fmt: skip


async def test_records_reach_the_client() -> None:
    server = Server("logs", "1", logging=True)

    @server.tool()
    async def work(ctx: RequestContext) -> str:
        with forward_logging(ctx, "app"):
            logging.getLogger("app.db").info("async %s", "info")
            logging.getLogger("app").error("async error")
            logging.getLogger("other").error("not forwarded")
        logging.getLogger("app").error("after the block: not forwarded")
        return "ok"

    def sync_work(ctx: RequestContext) -> str:
        logging.getLogger("app.sync").warning("from a worker thread")
        return "ok"

    @server.tool()
    async def threaded(ctx: RequestContext) -> str:
        with forward_logging(ctx, "app"):
            return await anyio.to_thread.run_sync(sync_work, ctx)

    received: list[tuple[str, str, str]] = []

    async def on_log(params: types.LoggingMessageNotificationParams) -> None:
        assert isinstance(params.logger, str)
        received.append((params.level, params.logger, str(params.data)))

    async with connected(server, Client("c", "1", logging=on_log, versions=HANDSHAKE_VERSIONS)) as client:
        await client.call_tool("work")
        await client.call_tool("threaded")
        await client.set_logging_level("error")
        await client.call_tool("work")
        await client.ping()
        # Every record was sent before its call's answer: once the notifications received before
        # the ping's answer are handled, all that will come has come.
        await client.session.notifications_handled()
    assert sorted(received) == sorted(
        [
            ("info", "app.db", "async info"),
            ("error", "app", "async error"),
            ("warning", "app.sync", "from a worker thread"),
            ("error", "app", "async error"),
        ]
    )
