"""The gateway: several servers as one, through mcpbind's own client in both eras."""

from __future__ import annotations

from collections.abc import AsyncIterator
from contextlib import asynccontextmanager

import anyio
import pytest

from mcpbind import types
from mcpbind.client.client import Client
from mcpbind.client.remote import RemoteServer
from mcpbind.client.subscriptions import ResourceUpdated
from mcpbind.protocol.errors import McpError
from mcpbind.proxy import Upstream, serving_gateway
from mcpbind.proxy.health import health_report
from mcpbind.server.server import Server
from mcpbind.versions import HANDSHAKE_VERSIONS, MODERN_VERSIONS
from tests.gateway.upstreams import in_memory, named_server, unreachable
from tests.harness import connected

pytestmark = pytest.mark.anyio

STATELESS = tuple(MODERN_VERSIONS)
ERAS = [pytest.param(HANDSHAKE_VERSIONS, id="2025-client"), pytest.param(STATELESS, id="2026-client")]


@asynccontextmanager
async def gateway(*upstreams: Upstream, versions: tuple[str, ...]) -> AsyncIterator[RemoteServer]:
    async with (
        serving_gateway(list(upstreams), wait=5) as front,
        connected(front, Client("tester", "1", versions=versions)) as remote,
    ):
        yield remote


def text_of(result: types.CallToolResult | types.GetPromptResult) -> str:
    if isinstance(result, types.CallToolResult):
        block = result.content[0]
    else:
        block = result.messages[0].content
    assert isinstance(block, types.TextContent)
    return block.text


@pytest.mark.parametrize("versions", ERAS)
async def test_tools_and_prompts_are_prefixed_and_routed(versions: tuple[str, ...]) -> None:
    alpha = Upstream(in_memory(named_server("alpha")), name="alpha")
    beta = Upstream(in_memory(named_server("beta", handshake_only=True)), name="beta")
    async with gateway(alpha, beta, versions=versions) as remote:
        tools = await remote.list_tools()
        assert sorted(t.name for t in tools.tools) == ["alpha_search", "beta_search"]
        assert text_of(await remote.call_tool("beta_search", {"query": "q"})) == "beta:q"
        assert text_of(await remote.call_tool("alpha_search", {"query": "q"})) == "alpha:q"
        prompts = await remote.list_prompts()
        assert sorted(p.name for p in prompts.prompts) == ["alpha_greet", "beta_greet"]
        assert text_of(await remote.get_prompt("beta_greet", {"who": "ann"})) == "beta greets ann"
        with pytest.raises(McpError) as caught:
            await remote.call_tool("gamma_search", {"query": "q"})
        assert "unknown tool 'gamma_search'" in caught.value.message


@pytest.mark.parametrize("versions", ERAS)
async def test_resources_keep_their_uris_and_are_routed(versions: tuple[str, ...]) -> None:
    alpha = Upstream(in_memory(named_server("alpha")), name="alpha")
    beta = Upstream(in_memory(named_server("beta")), name="beta")
    async with gateway(alpha, beta, versions=versions) as remote:
        listed = await remote.list_resources()
        assert {(r.uri, r.name) for r in listed.resources} == {
            ("alpha://readme", "alpha_readme"),
            ("beta://readme", "beta_readme"),
        }
        read = await remote.read_resource("beta://readme")
        assert isinstance(read.contents[0], types.TextResourceContents)
        assert read.contents[0].text == "beta readme"
        # A URI of a template, never listed: matched against the servers' templates.
        templated = await remote.read_resource("alpha://doc/7")
        assert isinstance(templated.contents[0], types.TextResourceContents)
        assert templated.contents[0].text == "alpha doc 7"
        with pytest.raises(McpError):
            await remote.read_resource("nowhere://x")


async def test_one_server_down_leaves_the_others_serving() -> None:
    alpha = Upstream(in_memory(named_server("alpha")), name="alpha")
    down = Upstream(unreachable(), name="down", connect_timeout=0.2)
    async with gateway(alpha, down, versions=HANDSHAKE_VERSIONS) as remote:
        tools = await remote.list_tools()
        assert [t.name for t in tools.tools] == ["alpha_search"]
        with pytest.raises(McpError) as caught:
            await remote.call_tool("down_search", {"query": "q"})
        assert "Upstream server 'down' is unavailable" in caught.value.message
        assert "no such server" in caught.value.message
        assert text_of(await remote.call_tool("alpha_search", {"query": "still"})) == "alpha:still"
        serving, report = health_report([alpha, down])
        assert serving and report["status"] == "degraded"
        assert report["servers"]["alpha"]["status"] == "up"


async def test_a_servers_list_change_reaches_the_client() -> None:
    upstream_server: Server = named_server("alpha")
    alpha = Upstream(in_memory(upstream_server), name="alpha")
    changed = anyio.Event()

    async def on_change(params: object, ctx: object) -> None:
        changed.set()

    client = Client(
        "tester",
        "1",
        versions=HANDSHAKE_VERSIONS,
        notification_handlers={"notifications/tools/list_changed": on_change},
    )
    async with serving_gateway([alpha], wait=5) as front, connected(front, client) as remote:
        assert [t.name for t in (await remote.list_tools()).tools] == ["alpha_search"]

        @upstream_server.tool()
        async def fetch(url: str) -> str:
            """Fetch."""
            return url

        with anyio.fail_after(5):
            await changed.wait()
        assert sorted(t.name for t in (await remote.list_tools()).tools) == ["alpha_fetch", "alpha_search"]


async def test_a_stateless_client_listening_hears_a_resource_updated_upstream() -> None:
    upstream_server = named_server("alpha")
    alpha = Upstream(in_memory(upstream_server), name="alpha")
    beta = Upstream(in_memory(named_server("beta", handshake_only=True)), name="beta")
    async with gateway(alpha, beta, versions=STATELESS) as remote:
        async with remote.listen(resource_uris=["alpha://readme", "beta://readme"]) as changes:
            assert changes.acknowledged is not None
            await upstream_server.resource_updated("alpha://readme")
            event = await changes.next(timeout=5)
            assert isinstance(event, ResourceUpdated) and event.uri == "alpha://readme"
        # The stream is closed: the servers' subscriptions were dropped with it.
        with anyio.fail_after(5):
            while alpha.subscribed or beta.subscribed:
                await anyio.sleep(0.01)
