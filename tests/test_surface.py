"""The one import surface (issue 13): ``from mcpbind import Server, Client, Context, McpError,
ToolError, types`` is all a server and its client need, type-checks under mypy --strict, and
``import mcpbind`` alone imports none of it."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import anyio
import pytest

from mcpbind import Client, Context, McpError, Server, ToolError, types
from mcpbind.transports.memory import memory_pair
from tests.harness import child_env
from tests.test_typing import assert_mypy_marks


def build_server() -> Server:
    server = Server("surface", "1.0")

    @server.tool()
    def add(a: int, b: int) -> int:
        """Add two numbers."""
        return a + b

    @server.tool()
    def refuse() -> str:
        raise ToolError("no")

    @server.on(types.methods.COMPLETION_COMPLETE)
    async def complete(params: types.CompleteRequestParams, ctx: Context) -> types.CompleteResult:
        assert ctx.protocol_version == "2026-07-28"  # a default Client negotiates the stateless era
        return types.CompleteResult(completion=types.CompleteResultCompletion(values=[params.argument.value]))

    return server


@pytest.mark.anyio
async def test_a_server_and_client_from_the_surface_alone() -> None:
    server_end, client_end = memory_pair()
    async with anyio.create_task_group() as tg:
        tg.start_soon(build_server().run, server_end)
        with anyio.fail_after(10):
            async with Client("c", "1").connect(client_end) as session:
                result = await session.call_tool("add", {"a": 2, "b": 40})
                assert isinstance(result, types.CallToolResult)
                assert result.structured_content == {"result": 42}
                refused = await session.call_tool("refuse", {})
                assert refused.is_error is True
                assert refused.content == [types.TextContent(text="no")]
                ref = types.PromptReference(name="p")
                completed = await session.complete(ref, "x", "abc")
                assert completed.completion.values == ["abc"]
                with pytest.raises(McpError):
                    await session.call_tool("missing", {})
        tg.cancel_scope.cancel()


def test_the_surface_names() -> None:
    import mcpbind
    from mcpbind import versions
    from mcpbind.client import remote
    from mcpbind.protocol import errors
    from mcpbind.runtime import middleware, session
    from mcpbind.schema import v2025_11_25
    from mcpbind.server import server as server_module

    assert mcpbind.Context is session.RequestContext
    assert mcpbind.RemoteServer is remote.RemoteServer
    assert mcpbind.Middleware is middleware.Middleware
    assert mcpbind.Server is server_module.Server
    assert (mcpbind.McpError, mcpbind.ToolError) == (errors.McpError, errors.ToolError)
    assert types.__all__ == v2025_11_25.__all__
    assert all(getattr(types, name) is getattr(v2025_11_25, name) for name in types.__all__)
    assert types.methods.TOOLS_CALL.method == "tools/call"
    # mcpbind.types is the package of the version handlers see, as mcpbind.versions names it.
    assert types.methods.PROTOCOL_VERSION == versions.HANDLER_VERSION
    assert set(mcpbind.__all__) <= set(dir(mcpbind))
    with pytest.raises(AttributeError, match="no attribute 'Nothing'"):
        mcpbind.Nothing  # type: ignore[attr-defined]  # noqa: B018


SNIPPET = """\
from mcpbind import Client, Context, McpError, Server, ToolError, types
server = Server("demo", "1.0")


@server.tool()
def add(a: int, b: int) -> int:
    return a + b


@server.on(types.methods.TOOLS_LIST)
async def tools(params: types.PaginatedRequestParams, ctx: Context) -> types.ListToolsResult:
    return types.ListToolsResult(tools=[])


async def call(client: Client) -> str:
    try:
        async with client.connect_stdio("python", ["server.py"]) as session:
            result: types.CallToolResult = await session.call_tool("add", {"a": 1, "b": 2})
            return str(result.content)
    except McpError as exc:
        return exc.message


def fail() -> None:
    raise ToolError("no")


wrong: types.CallToolResult = types.ListToolsResult(tools=[])  # E: Incompatible types
from mcpbind import Nothing  # E: Module "mcpbind" has no attribute "Nothing"
"""


def test_the_surface_type_checks(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """mypy --strict sees every name of the surface with its type, and no other name."""
    assert_mypy_marks(SNIPPET, tmp_path, monkeypatch)


def test_importing_mcpbind_imports_no_endpoint() -> None:
    """The surface is imported on first use: ``import mcpbind`` stays cheap (no endpoint, no
    generated types)."""
    code = "import sys, mcpbind; print(sorted(m for m in sys.modules if m.startswith('mcpbind')))"
    out = subprocess.run(
        [sys.executable, "-c", code], env=child_env(), capture_output=True, text=True, check=True, timeout=60
    ).stdout
    assert out.strip() == "['mcpbind']"
