"""Tasks end to end: mcpbind's client and server, over memory and Streamable HTTP, at
2026-07-28 (the tasks extension) and 2025-11-25 (that version's tasks)."""

from __future__ import annotations

from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Any

import anyio
import pytest

from mcpbind import types
from mcpbind.client.client import Client
from mcpbind.client.remote import RemoteServer
from mcpbind.client.tasks import TaskCancelled
from mcpbind.protocol import tasks as ext
from mcpbind.protocol.errors import INTERNAL_ERROR, INVALID_PARAMS, McpError
from mcpbind.runtime.context import RequestContext
from mcpbind.server.server import Server
from mcpbind.server.tasks import TaskSupport
from tests.harness import connected
from tests.http_harness import serve_asgi

pytestmark = pytest.mark.anyio

VERSIONS = ("2026-07-28", "2025-11-25")


async def ask_name(ctx: RequestContext) -> str:
    """What the ``greet`` tools do: ask the user's name (elicitation) and greet them."""
    answer = await ctx.elicit(
        types.ElicitRequestFormParams(
            message="Your name?",
            requested_schema=types.ElicitRequestFormParamsRequestedSchema(
                properties={"name": types.StringSchema()}, required=["name"]
            ),
        )
    )
    assert isinstance(answer, types.ElicitResult)
    content = answer.content if isinstance(answer.content, dict) else {}
    return f"Hello, {content.get('name')}!"


@pytest.fixture(params=VERSIONS)
def version(request: pytest.FixtureRequest) -> str:
    value: str = request.param
    return value


@pytest.fixture(params=["memory", "http"])
def transport(request: pytest.FixtureRequest) -> str:
    value: str = request.param
    return value


class Clock:
    """A clock the test moves."""

    def __init__(self) -> None:
        self.now = 1_700_000_000.0

    def __call__(self) -> float:
        return self.now


def make_server(**options: Any) -> tuple[Server, anyio.Event]:
    """A server with task tools; ``slow`` waits for the event returned."""
    options.setdefault("poll_interval_ms", 10)
    server = Server("tasks", "1.0", tasks=TaskSupport(**options))
    gate = anyio.Event()

    @server.tool(task=True)
    async def slow(n: int) -> int:
        await gate.wait()
        return n * 2

    @server.tool(task="required")
    async def refuse() -> int:
        raise McpError(INVALID_PARAMS, "no such thing")

    @server.tool(task="optional")
    async def forever() -> int:
        await anyio.sleep_forever()
        return 0

    @server.tool(task=True)
    async def greet(ctx: RequestContext) -> str:
        return await ask_name(ctx)

    @server.tool()
    async def plain(n: int) -> int:
        return n + 1

    return server, gate


async def answer_name(params: Any, ctx: RequestContext[Any]) -> types.ElicitResult:
    return types.ElicitResult(action="accept", content={"name": "Luca"})


@asynccontextmanager
async def connect(server: Server, version: str, transport: str) -> AsyncIterator[RemoteServer]:
    client = Client("tester", "0.1", versions=(version,), elicitation=answer_name)
    if transport == "memory":
        async with connected(server, client) as remote:
            yield remote
        return
    async with serve_asgi(server.http_app()) as base, client.connect_url(base + "/mcp") as remote:
        yield remote


def text_of(result: types.CallToolResult) -> str:
    item = result.content[0]
    assert isinstance(item, types.TextContent)
    return item.text


async def status_of(task: Any) -> str:
    state = await task.status()
    found: str = state.status
    return found


async def test_a_long_tool_runs_as_a_task_polled_to_completion(version: str, transport: str) -> None:
    server, gate = make_server()
    async with connect(server, version, transport) as remote:
        with anyio.fail_after(10):
            task = await remote.start_tool("slow", {"n": 21})
            assert task.task_id is not None
            assert await status_of(task) == "working"
            gate.set()
            result = await task.result()
    assert result.structured_content == {"result": 42}
    assert text_of(result) == '{"result":42}'


async def test_the_capability_is_declared(version: str) -> None:
    server, _ = make_server()
    async with connect(server, version, "memory") as remote:
        if version == "2026-07-28":
            discovered = await remote.discover()
            assert discovered.capabilities.extensions == {ext.TASKS_EXTENSION: {}}
        else:
            tasks = remote.server_capabilities.tasks
            assert isinstance(tasks, types.ServerCapabilitiesTasks)
            assert not isinstance(tasks.requests, types.UnsetType)
            assert tasks.requests.tools == types.ServerCapabilitiesTasksRequestsTools(call={})
        tools = {tool.name: tool for tool in await remote.all_tools()}
        assert tools["slow"].execution == types.ToolExecution(task_support="optional")
        assert tools["refuse"].execution == types.ToolExecution(task_support="required")
        assert tools["plain"].execution is types.UNSET


async def test_a_tool_error_fails_the_task(version: str, transport: str) -> None:
    server, _ = make_server()
    async with connect(server, version, transport) as remote:
        with anyio.fail_after(10):
            task = await remote.start_tool("refuse")
            with pytest.raises(McpError) as caught:
                await task.result()
            assert caught.value.code == INVALID_PARAMS
            assert caught.value.message == "no such thing"
            assert await status_of(task) == "failed"


async def test_a_task_is_cancelled(version: str, transport: str) -> None:
    server, _ = make_server()
    async with connect(server, version, transport) as remote:
        with anyio.fail_after(10):
            task = await remote.start_tool("forever")
            await task.cancel()
            assert await status_of(task) == "cancelled"
            with pytest.raises(TaskCancelled):
                await task.result()
            assert server.tasks.running_tasks == 0


async def test_input_required_is_answered_and_the_task_completes(version: str, transport: str) -> None:
    server, _ = make_server()
    async with connect(server, version, transport) as remote:
        with anyio.fail_after(10):
            task = await remote.start_tool("greet")
            assert task.task_id is not None
            result = await task.result()
    assert text_of(result) == "Hello, Luca!"


async def test_a_client_without_tasks_gets_the_result_at_once(version: str, transport: str) -> None:
    server, gate = make_server()
    gate.set()
    async with connect(server, version, transport) as remote:
        with anyio.fail_after(10):
            result = await remote.call_tool("slow", {"n": 2})
            assert result.structured_content == {"result": 4}
            with pytest.raises(McpError) as caught:
                await remote.call_tool("refuse")
    assert caught.value.code == (-32021 if version == "2026-07-28" else -32601)


async def test_an_unknown_task_is_invalid_params(version: str, transport: str) -> None:
    server, _ = make_server()
    async with connect(server, version, transport) as remote:
        with anyio.fail_after(10), pytest.raises(McpError) as caught:
            await remote.task("no-such-task").status()
    assert caught.value.code == INVALID_PARAMS


async def test_tasks_get_without_the_extension_is_refused() -> None:
    server, _ = make_server()
    async with connect(server, "2026-07-28", "memory") as remote:
        with anyio.fail_after(10), pytest.raises(McpError) as caught:
            await remote.request(ext.TASKS_GET, ext.GetTaskRequestParams(task_id="x"))
    assert caught.value.code == -32021
    assert caught.value.data == {"requiredCapabilities": {"extensions": {ext.TASKS_EXTENSION: {}}}}


async def test_an_expired_task_is_gone(version: str) -> None:
    clock = Clock()
    server, gate = make_server(clock=clock, default_ttl_ms=60_000)
    gate.set()
    async with connect(server, version, "memory") as remote:
        with anyio.fail_after(10):
            task = await remote.start_tool("slow", {"n": 1})
            await task.result()
            clock.now += 59
            assert await status_of(task) == "completed"
            clock.now += 2
            with pytest.raises(McpError) as caught:
                await task.status()
    assert caught.value.code == INVALID_PARAMS
    assert len(server.tasks.store) == 0  # type: ignore[arg-type]


async def test_running_tasks_are_bounded(version: str, transport: str) -> None:
    server, gate = make_server(max_running=1)
    async with connect(server, version, transport) as remote:
        with anyio.fail_after(10):
            first = await remote.start_tool("slow", {"n": 1})
            with pytest.raises(McpError) as caught:
                await remote.start_tool("slow", {"n": 2})
            assert caught.value.code == INTERNAL_ERROR
            assert "at most 1" in caught.value.message
            gate.set()
            await first.result()
            while server.tasks.running_tasks:
                await anyio.sleep(0.01)
            third = await remote.start_tool("slow", {"n": 3})
            assert (await third.result()).structured_content == {"result": 6}


async def test_a_2025_session_lists_its_tasks_and_hears_of_status_changes() -> None:
    server, gate = make_server()
    seen: list[str] = []

    async def status(params: types.TaskStatusNotificationParams, ctx: RequestContext[Any]) -> None:
        seen.append(params.status)

    client = Client(
        "tester",
        "0.1",
        versions=("2025-11-25",),
        notification_handlers={"notifications/tasks/status": status},
    )
    async with connected(server, client) as remote:
        with anyio.fail_after(10):
            task = await remote.start_tool("slow", {"n": 1}, ttl_ms=5000)
            listed = await remote.request(types.methods.TASKS_LIST, types.PaginatedRequestParams())
            assert [t.task_id for t in listed.tasks] == [task.task_id]
            assert listed.tasks[0].ttl == 5000
            gate.set()
            await task.result()
            while "completed" not in seen:
                await anyio.sleep(0.01)
            with pytest.raises(McpError) as caught:
                await task.cancel()
    assert caught.value.code == INVALID_PARAMS
