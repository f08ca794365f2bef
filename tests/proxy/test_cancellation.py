"""A forwarded call ends upstream when its client gives up on it: cancelled by the client, or
its client gone (the connection closed mid-call)."""

from __future__ import annotations

import functools

import anyio
import pytest

from mcpbind.client.remote import RemoteServer
from mcpbind.protocol.errors import McpError
from mcpbind.proxy import Upstream
from tests.proxy.proxying import FRONTS, Front, front_client, in_memory, running_proxy
from tests.proxy.upstreams import ERAS, Probe, build_upstream

pytestmark = pytest.mark.anyio

WAIT = 10.0


async def call_hang(remote: RemoteServer, *, closing: bool = False) -> None:
    """Call ``hang``: cancelled (or, ``closing``, failing as the connection closes)."""
    try:
        await remote.call_tool("hang", {})
    except McpError:
        if not closing:
            raise
    else:
        raise AssertionError("hang answered")


@pytest.mark.parametrize("server_era", ERAS)
@pytest.mark.parametrize("client_era", ERAS)
@pytest.mark.parametrize("front", FRONTS)
async def test_a_call_the_client_cancels_is_cancelled_upstream(
    front: Front, client_era: str, server_era: str
) -> None:
    probe = Probe()
    upstream = Upstream(in_memory(build_upstream(server_era, probe)))
    async with running_proxy(upstream, front) as proxy, proxy.connect(front_client(client_era)) as remote:
        with anyio.fail_after(WAIT):
            async with anyio.create_task_group() as tasks:
                tasks.start_soon(call_hang, remote)
                await probe.hanging.wait()
                tasks.cancel_scope.cancel()
            await probe.cancelled.wait()
            # The proxy goes on serving.
            assert (await remote.call_tool("add", {"a": 1, "b": 1})).structured_content == {"result": 2}
        assert len(upstream.in_flight) == 0 and len(upstream.held) == 0


@pytest.mark.parametrize("client_era", ERAS)
@pytest.mark.parametrize("front", FRONTS)
async def test_a_client_gone_mid_call_has_its_call_cancelled_upstream(front: Front, client_era: str) -> None:
    """(Over stdio, or a memory pair, a server lets the calls of a client gone finish for
    ``shutdown_grace_period``: short here.)"""
    probe = Probe()
    upstream = Upstream(in_memory(build_upstream("2025", probe)))
    async with running_proxy(upstream, front, shutdown_grace_period=0.1) as proxy:
        with anyio.fail_after(WAIT):
            async with anyio.create_task_group() as tasks:

                async def connect_and_hang() -> None:
                    async with proxy.connect(front_client(client_era)) as remote:
                        tasks.start_soon(functools.partial(call_hang, remote, closing=True))
                        await probe.hanging.wait()
                        # leaving the block closes the connection, the call in flight

                await connect_and_hang()
            await probe.cancelled.wait()
        assert len(upstream.in_flight) == 0
