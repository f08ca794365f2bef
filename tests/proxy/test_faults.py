"""Faults behind the proxy: the server's process dies mid-call (its clients get an error at once;
the proxy starts it again, or, told not to, says it is unavailable), a server that does not
answer (the proxy's request timeout), and a flood of calls (at most ``max_in_flight`` reach the
server at once; the others wait their turn). What clients subscribed to outlives a restart."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

import anyio
import pytest

from mcpbind.client.client import Client
from mcpbind.client.remote import RemoteServer
from mcpbind.client.subscriptions import ResourceUpdated
from mcpbind.protocol.errors import McpError
from mcpbind.proxy import Upstream
from mcpbind.transports.stdio import StdioClientTransport
from tests.harness import child_env
from tests.proxy.proxying import front_client, in_memory, running_proxy
from tests.proxy.upstreams import ERAS, FLOOD_LIMIT, Probe, build_upstream, version_of

pytestmark = pytest.mark.anyio

DYING_SERVER = Path(__file__).with_name("dying_server.py")
EVERYTHING = Path(__file__).resolve().parents[2] / "examples" / "everything.py"
PROMPTLY = 10.0  # the most an error or a restart may take (a slow CI machine starting Python)


def dying_server(**options: Any) -> Upstream:
    """The stdio server of dying_server.py behind an upstream (``options``: the Upstream's)."""

    def connect(client: Client) -> Any:
        return client.connect_stdio(sys.executable, [str(DYING_SERVER)], env=child_env())

    return Upstream(connect, name="dying", **options)


async def pid(remote: RemoteServer) -> int:
    result = await remote.call_tool("pid", {})
    assert isinstance(result.structured_content, dict)
    value: int = result.structured_content["result"]
    return value


async def test_a_server_dying_mid_call_is_an_error_then_started_again() -> None:
    """(A stateless client's call dies: the held call's path; both eras' clients go on.)"""
    upstream = dying_server()
    async with (
        running_proxy(upstream) as proxy,
        proxy.connect(front_client("2026")) as stateless,
        proxy.connect(front_client("2025")) as session,
    ):
        first = await pid(session)
        with anyio.fail_after(PROMPTLY), pytest.raises(McpError):
            await stateless.call_tool("die", {})
        with anyio.fail_after(PROMPTLY):  # (a call waits for the server to be up again)
            for remote in (stateless, session):
                assert (await remote.call_tool("add", {"a": 1, "b": 2})).structured_content == {"result": 3}
        assert upstream.restarts == 1 and upstream.status == "up"
        assert await pid(session) != first


async def test_a_server_not_restarted_is_unavailable() -> None:
    upstream = dying_server(restart=False, connect_timeout=3 * PROMPTLY)  # (refused without waiting)
    async with running_proxy(upstream) as proxy, proxy.connect(front_client("2025")) as remote:
        with anyio.fail_after(PROMPTLY), pytest.raises(McpError):
            await remote.call_tool("die", {})
        for _ in range(2):
            with anyio.fail_after(PROMPTLY), pytest.raises(McpError) as refused:
                await remote.call_tool("add", {"a": 1, "b": 2})
            assert "Upstream server 'dying' is unavailable" in refused.value.message
            assert "not restarted" in refused.value.message
        assert upstream.restarts == 0


@pytest.mark.parametrize("client_era", ERAS)
async def test_a_server_that_does_not_answer_times_out(client_era: str) -> None:
    probe = Probe()
    upstream = Upstream(in_memory(build_upstream("2025", probe)), request_timeout=0.2)
    async with running_proxy(upstream) as proxy, proxy.connect(front_client(client_era)) as remote:
        with anyio.fail_after(PROMPTLY), pytest.raises(McpError) as refused:
            await remote.call_tool("hang", {})
        assert "timed out" in refused.value.message.lower() or "timeout" in refused.value.message.lower()
        with anyio.fail_after(PROMPTLY):
            await probe.cancelled.wait()  # and the server was told to stop
        assert (await remote.call_tool("add", {"a": 1, "b": 2})).structured_content == {"result": 3}


@pytest.mark.parametrize("client_era", ERAS)
async def test_a_flood_of_calls_reaches_the_server_a_few_at_a_time(client_era: str) -> None:
    probe = Probe()
    upstream = Upstream(in_memory(build_upstream("2025", probe)), max_in_flight=FLOOD_LIMIT)
    results: dict[int, Any] = {}
    async with running_proxy(upstream) as proxy, proxy.connect(front_client(client_era)) as remote:

        async def call(n: int) -> None:
            results[n] = (await remote.call_tool("busy", {"n": n})).structured_content

        with anyio.fail_after(30):
            async with anyio.create_task_group() as tasks:
                for n in range(200):
                    tasks.start_soon(call, n)
    assert results == {n: {"result": n} for n in range(200)}
    assert probe.busy_most == FLOOD_LIMIT  # (the first ones wait until FLOOD_LIMIT run at once)
    assert probe.busy_now == 0 and len(upstream.in_flight) == 0


@pytest.mark.parametrize("server_era", ERAS)
async def test_subscriptions_outlive_a_restart(server_era: str) -> None:
    """examples/everything.py killed while a client listens for a note: after the restart the
    server is subscribed again (a session's server with resources/subscribe, a stateless one on
    the proxy's listen stream) and the note's next update arrives."""
    pin = version_of(server_era) if server_era == "2025" else None

    def connect(client: Client) -> Any:
        return client.connect_stdio(sys.executable, [str(EVERYTHING)], env=child_env())

    upstream = Upstream(connect, protocol_version=pin)
    async with (
        running_proxy(upstream) as proxy,
        proxy.connect(front_client("2025")) as remote,
        remote.listen(resource_uris=["notes://x"]) as changes,
    ):
        assert upstream.remote is not None and upstream.remote.protocol_version == version_of(server_era)
        transport = upstream.remote.session.transport
        assert isinstance(transport, StdioClientTransport)
        transport.process.kill()
        with anyio.fail_after(PROMPTLY):
            while upstream.restarts == 0:  # (a call sent before the proxy sees the death fails)
                await anyio.sleep(0.02)
            await remote.call_tool("write_note", {"name": "x", "text": "again"})
            assert await anext(aiter(changes)) == ResourceUpdated("notes://x")
        assert upstream.restarts == 1
