"""Errors through the proxy: the server's JSON-RPC errors reach the client as the server sent
them (code, message, data); a request for what the server does not offer is refused by the
proxy itself with -32601, as the server would."""

from __future__ import annotations

from collections.abc import Awaitable, Callable

import pytest

from mcpbind import types
from mcpbind.protocol.errors import INVALID_PARAMS, METHOD_NOT_FOUND, RESOURCE_NOT_FOUND, McpError
from mcpbind.proxy import Upstream
from tests.proxy.proxying import front_client, in_memory, running_proxy
from tests.proxy.upstreams import ERAS, FAILURE, Probe, build_upstream

pytestmark = pytest.mark.anyio


@pytest.mark.parametrize("server_era", ERAS)
@pytest.mark.parametrize("client_era", ERAS)
async def test_the_server_s_errors_reach_the_client_unchanged(client_era: str, server_era: str) -> None:
    upstream = Upstream(in_memory(build_upstream(server_era, Probe())))
    async with running_proxy(upstream) as proxy, proxy.connect(front_client(client_era)) as remote:
        with pytest.raises(McpError) as failed:
            await remote.call_tool("fail", {})
        assert (failed.value.code, failed.value.message, failed.value.data) == (
            FAILURE.code,
            FAILURE.message,
            FAILURE.data,
        )
        with pytest.raises(McpError) as missing:
            await remote.read_resource("other://nothing")
        # 2026-07-28 moved "resource not found" to -32602: a 2026 server says so, and a 2026
        # client is told so (as a 2026 server of the proxy's own would).
        both_2025 = client_era == server_era == "2025"
        assert missing.value.code == (RESOURCE_NOT_FOUND if both_2025 else INVALID_PARAMS)
        assert missing.value.data == {"uri": "other://nothing"}


@pytest.mark.parametrize("client_era", ERAS)
async def test_what_the_server_does_not_offer_is_method_not_found(client_era: str) -> None:
    upstream = Upstream(in_memory(build_upstream("2025", Probe())))  # no prompts, no completions
    async with running_proxy(upstream) as proxy, proxy.connect(front_client(client_era)) as remote:
        assert remote.server_capabilities.prompts is types.UNSET
        assert remote.server_capabilities.completions is types.UNSET
        refused: list[Callable[[], Awaitable[object]]] = [
            remote.list_prompts,
            lambda: remote.get_prompt("p"),
            lambda: remote.complete(types.PromptReference(name="p"), "a", "x"),
        ]
        for request in refused:
            with pytest.raises(McpError) as unknown:
                await request()
            assert unknown.value.code == METHOD_NOT_FOUND
        assert len(upstream.in_flight) == 0
