"""What travels beside a call's result through the proxy: its progress notifications (under the
client's own progress token) and log messages, to the client of the call; and the server's list
changes and resource updates, to the proxy's clients (a session's as notifications, a stateless
client's on its ``subscriptions/listen`` stream), an update only to the clients subscribed."""

from __future__ import annotations

import anyio
import pytest

from mcpbind import Client, types
from mcpbind.client.subscriptions import ResourceUpdated, ToolsListChanged
from mcpbind.proxy import Upstream
from mcpbind.runtime.context import RequestContext
from tests.proxy.proxying import FRONTS, Front, front_client, in_memory, running_proxy
from tests.proxy.upstreams import ERAS, Probe, build_upstream

pytestmark = pytest.mark.anyio

WAIT = 10.0  # the most a notification may take to arrive


@pytest.mark.parametrize("server_era", ERAS)
@pytest.mark.parametrize("client_era", ERAS)
async def test_progress_and_log_messages_reach_the_caller(client_era: str, server_era: str) -> None:
    progress: list[tuple[float, float | None, str | None]] = []
    logged: list[object] = []

    async def on_progress(done: float, total: float | None, message: str | None) -> None:
        progress.append((done, total, message))

    async def on_log(params: types.LoggingMessageNotificationParams) -> None:
        logged.append(params.data)

    client = front_client(client_era, logging=on_log, log_level="info" if client_era == "2026" else None)
    upstream = Upstream(in_memory(build_upstream(server_era, Probe())))
    async with running_proxy(upstream) as proxy, proxy.connect(client) as remote:
        if client_era == "2025":
            await remote.set_logging_level("info")
        result = await remote.call_tool("count", {"steps": 3}, progress=on_progress)
        assert result.content[0].text == "counted"  # type: ignore[union-attr]
        # (a call's notifications come before its result)
        assert progress == [(1, 3, "step 1"), (2, 3, "step 2"), (3, 3, "step 3")]
        assert logged == [{"step": 1}, {"step": 2}, {"step": 3}]


@pytest.mark.parametrize("server_era", ERAS)
@pytest.mark.parametrize("front", FRONTS)
async def test_list_changes_reach_clients_of_both_eras(front: Front, server_era: str) -> None:
    """(A stateless server tells of them only on a listen stream, which the proxy keeps open.)"""
    upstream_server = build_upstream(server_era, Probe())
    told = anyio.Event()

    async def on_tools_changed(params: object, ctx: RequestContext) -> None:
        told.set()

    session_client = front_client(
        "2025", notification_handlers={"notifications/tools/list_changed": on_tools_changed}
    )
    upstream = Upstream(in_memory(upstream_server))
    async with (
        running_proxy(upstream, front) as proxy,
        proxy.connect(session_client),
        proxy.connect(front_client("2026")) as stateless,
        stateless.listen(tools=True) as changes,
    ):
        assert changes.acknowledged.tools_list_changed is True
        await upstream_server.tools_changed()
        with anyio.fail_after(WAIT):
            await told.wait()
            assert await anext(aiter(changes)) == ToolsListChanged()


@pytest.mark.parametrize("server_era", ERAS)
async def test_a_resource_update_reaches_its_subscribers_only(server_era: str) -> None:
    """(A stateless server has no resources/subscribe: the proxy listens for the resources.)"""
    upstream_server = build_upstream(server_era, Probe())
    updates: dict[str, list[str]] = {"a": [], "b": []}
    arrived = {"a": anyio.Event(), "b": anyio.Event()}

    def client_of(who: str) -> Client:
        async def on_update(params: types.ResourceUpdatedNotificationParams, ctx: RequestContext) -> None:
            updates[who].append(params.uri)
            arrived[who].set()

        return front_client("2025", notification_handlers={"notifications/resources/updated": on_update})

    upstream = Upstream(in_memory(upstream_server))
    async with (
        running_proxy(upstream) as proxy,
        proxy.connect(client_of("a")) as a,
        proxy.connect(client_of("b")) as b,
    ):
        await a.subscribe_resource("notes://one")
        await b.subscribe_resource("notes://two")
        await upstream_server.resource_updated("notes://one")
        await upstream_server.resource_updated("notes://two")
        with anyio.fail_after(WAIT):
            await arrived["a"].wait()
            await arrived["b"].wait()
        # (b's update was sent after a's: had a's reached b, it would be in b's list first)
        assert updates == {"a": ["notes://one"], "b": ["notes://two"]}
        await a.unsubscribe_resource("notes://one")
        await b.unsubscribe_resource("notes://two")
        assert upstream.subscribed == {}


@pytest.mark.parametrize("server_era", ERAS)
async def test_a_stateless_client_hears_of_the_resources_it_listens_for(server_era: str) -> None:
    """The server is subscribed to them while the client's listen stream is open."""
    upstream_server = build_upstream(server_era, Probe())
    upstream = Upstream(in_memory(upstream_server))
    async with running_proxy(upstream) as proxy, proxy.connect(front_client("2026")) as remote:
        async with remote.listen(resource_uris=["notes://one"]) as changes:
            assert changes.acknowledged.resource_subscriptions == ["notes://one"]
            assert upstream.subscribed == {"notes://one": 1}
            await upstream_server.resource_updated("notes://two")  # (not asked for)
            await upstream_server.resource_updated("notes://one")
            with anyio.fail_after(WAIT):
                assert await anext(aiter(changes)) == ResourceUpdated("notes://one")
        with anyio.fail_after(WAIT):  # (the stream ends at the proxy after the client left it)
            while upstream.subscribed:
                await anyio.sleep(0.01)


@pytest.mark.parametrize("front", FRONTS)
async def test_the_subscriptions_of_a_client_gone_end_upstream(front: Front) -> None:
    """A client subscribed (twice to one resource) and left without unsubscribing: the
    server is unsubscribed from what no client holds any more."""
    upstream = Upstream(in_memory(build_upstream("2025", Probe())))
    async with running_proxy(upstream, front) as proxy, proxy.connect(front_client("2025")) as staying:
        await staying.subscribe_resource("notes://kept")
        async with proxy.connect(front_client("2025")) as leaving:
            for uri in ("notes://one", "notes://one", "notes://kept"):
                await leaving.subscribe_resource(uri)
            assert upstream.subscribed == {"notes://kept": 2, "notes://one": 1}
        with anyio.fail_after(WAIT):
            while upstream.subscribed != {"notes://kept": 1}:
                await anyio.sleep(0.01)


async def test_a_stateless_client_s_log_level_reaches_a_session_s_server() -> None:
    """A session client asked for errors only; a stateless client asking for info in its
    requests gets its call's info messages all the same."""
    logged: list[object] = []

    async def on_log(params: types.LoggingMessageNotificationParams) -> None:
        logged.append(params.data)

    upstream = Upstream(in_memory(build_upstream("2025", Probe())))
    async with (
        running_proxy(upstream) as proxy,
        proxy.connect(front_client("2025")) as quiet,
        proxy.connect(front_client("2026", logging=on_log, log_level="info")) as stateless,
    ):
        await quiet.set_logging_level("error")
        await stateless.call_tool("count", {"steps": 2})
        assert logged == [{"step": 1}, {"step": 2}]
