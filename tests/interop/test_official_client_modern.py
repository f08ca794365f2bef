"""The official MCP Python SDK's high-level client (``mcp.Client``) speaking MCP 2026-07-28 to
mcpbind servers: pinned to the version and in ``auto`` mode (``server/discover`` first), over
stdio (a child process) and Streamable HTTP (the ASGI app on 127.0.0.1), against
``examples/everything.py`` and the conformance fixture server ``examples/conformance_server.py``.

What a user of the official client checks: the version it ended up speaking, lists, calls,
progress, log messages only when asked for (per request), sampling and elicitation through
multi round-trip requests, resources, prompts, completion, and ``subscriptions/listen``
delivering a change.
"""

from __future__ import annotations

import importlib.util
import sys
from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import anyio
import pytest

pytest.importorskip("mcp")

import mcp
import mcp.types
from mcp.client.session import ClientRequestContext
from mcp.shared.exceptions import MCPError
from mcp.shared.subscriptions import ResourceUpdated, ToolsListChanged

from tests.http_harness import serve_asgi
from tests.interop.test_official_client import child_env

pytestmark = pytest.mark.anyio

EXAMPLES = Path(__file__).resolve().parents[2] / "examples"
TEST_TIMEOUT = 30.0
MODERN = "2026-07-28"


def _load(name: str) -> Any:
    """An example module, imported from its file (each test gets the module's own server)."""
    spec = importlib.util.spec_from_file_location(f"_interop_{name}", EXAMPLES / f"{name}.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    # Registered first: msgspec resolves the example's annotations through sys.modules.
    sys.modules[spec.name] = module
    spec.loader.exec_module(module)
    return module


@pytest.fixture(params=["stdio", "http"])
def transport(request: pytest.FixtureRequest) -> str:
    name: str = request.param
    return name


@pytest.fixture(params=[MODERN, "auto"])
def mode(request: pytest.FixtureRequest) -> str:
    name: str = request.param
    return name


@asynccontextmanager
async def target(example: str, transport: str, anyio_backend: str) -> AsyncIterator[Any]:
    """What ``mcp.Client`` connects to: stdio parameters of a child running ``example``, or
    the URL of its Streamable HTTP app served here."""
    if transport == "stdio":
        args = [str(EXAMPLES / f"{example}.py")]
        if example == "conformance_server":
            args += ["--stdio", "--backend", anyio_backend]
        yield mcp.StdioServerParameters(command=sys.executable, args=args, env=child_env())
        return
    module = _load(example)
    server = module.build_server() if hasattr(module, "build_server") else module.server
    async with serve_asgi(server.http_app()) as url:
        yield f"{url}/mcp"


async def answer_sampling(
    context: ClientRequestContext, params: mcp.types.CreateMessageRequestParams
) -> mcp.types.CreateMessageResult:
    asked = params.messages[0].content
    text = asked.text if isinstance(asked, mcp.types.TextContent) else "?"
    return mcp.types.CreateMessageResult(
        role="assistant", content=mcp.types.TextContent(type="text", text=f"echo: {text}"), model="test-model"
    )


async def answer_elicitation(
    context: ClientRequestContext, params: mcp.types.ElicitRequestParams
) -> mcp.types.ElicitResult:
    return mcp.types.ElicitResult(action="accept", content={"username": "ada", "email": "ada@example.com"})


def client(where: Any, mode: str, **options: Any) -> mcp.Client:
    return mcp.Client(
        where,
        mode=mode,
        sampling_callback=answer_sampling,
        elicitation_callback=answer_elicitation,
        read_timeout_seconds=TEST_TIMEOUT,
        **options,
    )


def text_of(result: mcp.types.CallToolResult) -> str:
    return "".join(block.text for block in result.content if isinstance(block, mcp.types.TextContent))


async def test_everything_lists_calls_reads_prompts_and_completes(
    transport: str, mode: str, anyio_backend: str
) -> None:
    with anyio.fail_after(TEST_TIMEOUT):
        async with target("everything", transport, anyio_backend) as where, client(where, mode) as session:
            assert session.protocol_version == MODERN
            if mode == "auto":  # learnt from server/discover (a pinned client sends none)
                assert session.server_info is not None and session.server_info.name == "mcpbind-everything"
            tools = await session.list_tools()
            assert {"add", "weather", "countdown"} <= {tool.name for tool in tools.tools}
            added = await session.call_tool("add", {"a": 2, "b": 40})
            assert not added.is_error
            assert added.structured_content == {"result": 42}
            resources = await session.list_resources()
            assert "notes://index" in {str(resource.uri) for resource in resources.resources}
            note = await session.read_resource("notes://welcome")
            assert [getattr(c, "text", None) for c in note.contents] == ["Welcome to mcpbind."]
            prompt = await session.get_prompt("summarize", {"name": "speed"})
            assert prompt.messages and prompt.messages[0].role == "user"
            completed = await session.complete(
                mcp.types.PromptReference(type="ref/prompt", name="summarize"), {"name": "name", "value": "w"}
            )
            assert completed.completion.values == ["welcome"]
            with pytest.raises(MCPError) as missing:
                await session.read_resource("elsewhere://nothing")
            assert missing.value.error.code == -32602  # resource not found, as 2026-07-28 numbers it


async def test_progress_and_log_messages_only_when_the_request_asks(
    transport: str, mode: str, anyio_backend: str
) -> None:
    steps: list[float] = []
    logged: list[Any] = []

    async def on_progress(progress: float, total: float | None, message: str | None) -> None:
        steps.append(progress)

    async def on_log(params: mcp.types.LoggingMessageNotificationParams) -> None:
        logged.append(params.data)

    with anyio.fail_after(TEST_TIMEOUT):
        async with target("everything", transport, anyio_backend) as where:
            async with client(where, mode, logging_callback=on_log) as quiet:
                result = await quiet.call_tool("countdown", {"start": 3}, progress_callback=on_progress)
                assert text_of(result) == "liftoff"
            assert steps == [1, 2, 3]
            assert logged == []  # no logLevel in the request's _meta: no log messages
            steps.clear()
            async with client(where, mode, logging_callback=on_log, log_level="info") as chatty:
                result = await chatty.call_tool("countdown", {"start": 3}, progress_callback=on_progress)
                assert text_of(result) == "liftoff"
            assert logged == [{"countdown": 3}, {"countdown": 2}, {"countdown": 1}]
            assert steps == [1, 2, 3]


async def test_sampling_and_elicitation_through_multi_round_trip_requests(
    transport: str, mode: str, anyio_backend: str
) -> None:
    with anyio.fail_after(TEST_TIMEOUT):
        async with (
            target("conformance_server", transport, anyio_backend) as where,
            client(where, mode) as session,
        ):
            assert session.protocol_version == MODERN
            sampled = await session.call_tool("test_sampling", {"prompt": "what is 2+2?"})
            assert text_of(sampled) == "LLM response: echo: what is 2+2?"
            elicited = await session.call_tool("test_elicitation", {"message": "who are you?"})
            assert text_of(elicited) == (
                'User response: action=accept, content={"username":"ada","email":"ada@example.com"}'
            )


async def test_a_tool_that_needs_a_capability_the_client_lacks(
    transport: str, mode: str, anyio_backend: str
) -> None:
    with anyio.fail_after(TEST_TIMEOUT):
        async with (
            target("conformance_server", transport, anyio_backend) as where,
            mcp.Client(where, mode=mode, read_timeout_seconds=TEST_TIMEOUT) as session,
        ):
            result = await session.call_tool("test_sampling", {"prompt": "hello"})
            assert result.is_error
            assert "sampling" in text_of(result)


async def wait_for(events: Any, wanted: Callable[[Any], bool]) -> Any:
    async for event in events:
        if wanted(event):
            return event
    raise AssertionError("the listen stream ended before the change arrived")


async def test_listen_delivers_tool_list_changes_and_resource_updates(
    transport: str, mode: str, anyio_backend: str
) -> None:
    with anyio.fail_after(TEST_TIMEOUT):
        async with (
            target("conformance_server", transport, anyio_backend) as where,
            client(where, mode) as session,
        ):
            before = {tool.name for tool in (await session.list_tools()).tools}
            async with session.listen(tools_list_changed=True) as tools_stream:
                assert tools_stream.honored.tools_list_changed
                await session.call_tool("test_add_tool", {})
                with anyio.fail_after(5):
                    event = await wait_for(tools_stream, lambda e: isinstance(e, ToolsListChanged))
                assert isinstance(event, ToolsListChanged)
            after = {tool.name for tool in (await session.list_tools(cache_mode="bypass")).tools}
            assert before < after
            watched = "test://watched-resource"
            async with session.listen(resource_subscriptions=[watched]) as resource_stream:
                assert list(resource_stream.honored.resource_subscriptions or []) == [watched]
                await session.call_tool("test_update_resource", {})
                with anyio.fail_after(5):
                    update = await wait_for(resource_stream, lambda e: isinstance(e, ResourceUpdated))
                assert update.uri == watched
