"""What real servers do that the proxy must carry: questions without params (``roots/list``),
and log messages from a server that never declared ``logging``."""

from __future__ import annotations

from typing import Any

import anyio
import msgspec
import pytest
from msgspec import UNSET

from mcpbind import types
from mcpbind.protocol.methods import Direction
from mcpbind.proxy import Upstream
from mcpbind.proxy.specs import raw_request
from mcpbind.runtime.context import RequestContext
from mcpbind.server.server import Server
from mcpbind.versions import HANDSHAKE_VERSIONS
from tests.proxy.proxying import FRONTS, Front, front_client, in_memory, running_proxy
from tests.proxy.upstreams import ERAS

pytestmark = pytest.mark.anyio

methods = types.methods


def quirky_server() -> Server:
    """A 2025 server (as most are) that asks the client's roots mid-call, and logs on a session
    without declaring ``logging``, as some SDKs' servers do."""
    server = Server("quirky", "1", versions=tuple(HANDSHAKE_VERSIONS), logging=False)

    @server.tool()
    async def roots(ctx: RequestContext[Any]) -> str:
        """The client's roots, asked with no params at all (as the TypeScript SDK asks)."""
        spec = raw_request("roots/list", Direction.SERVER_TO_CLIENT)
        answer = await ctx.session.request(spec, UNSET, related=ctx.request_id)
        listed = msgspec.json.decode(answer, type=types.ListRootsResult)
        return ",".join(root.uri for root in listed.roots)

    @server.tool()
    async def chatty(ctx: RequestContext[Any]) -> str:
        """Logs, undeclared."""
        params = types.LoggingMessageNotificationParams(level="warning", data="careful", logger="quirky")
        await ctx.session.notify(methods.NOTIFICATIONS_MESSAGE, params, related=ctx.request_id)
        return "said"

    return server


@pytest.mark.parametrize("era", ERAS)
@pytest.mark.parametrize("front", FRONTS)
async def test_a_question_without_params_reaches_the_client(era: str, front: Front) -> None:
    async def roots(params: Any, ctx: Any) -> types.ListRootsResult:
        return types.ListRootsResult(roots=[types.Root(uri="file:///work")])

    upstream = Upstream(in_memory(quirky_server()))
    async with (
        running_proxy(upstream, front) as proxy,
        proxy.connect(front_client(era, roots=roots)) as remote,
    ):
        with anyio.fail_after(20):
            result = await remote.call_tool("roots", {})
        block = result.content[0]
        assert isinstance(block, types.TextContent) and block.text == "file:///work"


@pytest.mark.parametrize("era", ERAS)
async def test_log_messages_of_a_server_that_declares_no_logging_reach_the_client(era: str) -> None:
    heard: list[Any] = []

    async def on_log(params: types.LoggingMessageNotificationParams) -> None:
        heard.append((params.level, params.data, params.logger))

    upstream = Upstream(in_memory(quirky_server()))
    client = front_client(era, logging=on_log, **({"log_level": "debug"} if era == "2026" else {}))
    async with running_proxy(upstream, "http") as proxy, proxy.connect(client) as remote:
        assert remote.server_capabilities.logging is not types.UNSET
        if era == "2025":
            await remote.set_logging_level("debug")
        with anyio.fail_after(20):
            await remote.call_tool("chatty", {})
            while not heard:
                await anyio.sleep(0.01)
        assert heard == [("warning", "careful", "quirky")]
