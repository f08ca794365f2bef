"""``Client.connect_url`` and the CLI over HTTP: Streamable HTTP, the legacy fallback, errors."""

from __future__ import annotations

import json

import anyio
import pytest

from mcpbind.client.client import Client
from mcpbind.protocol.errors import INVALID_PARAMS, McpError
from mcpbind.runtime.session import RequestContext
from mcpbind.schema import v2025_11_25 as types
from mcpbind.server.server import Server
from mcpbind.transports.http.client import HTTPTransportError
from mcpbind.transports.http.legacy import LegacySSEApp
from mcpbind.transports.http.server import StreamableHTTPApp
from mcpbind.versions import HANDSHAKE_VERSIONS
from tests.cli_harness import free_port, mcpbind_serving, run_mcpbind
from tests.http_harness import serve_asgi


def build() -> Server:
    server = Server("http-connect", "1")

    @server.tool()
    async def count(n: int, ctx: RequestContext) -> str:
        for i in range(n):
            await ctx.report_progress(i + 1, n)
        return f"counted to {n}"

    @server.resource("memo://{name}")
    def memo(name: str) -> str:
        return f"memo {name}"

    return server


@pytest.mark.anyio
async def test_connect_url_speaks_streamable_http() -> None:
    app = StreamableHTTPApp(build())
    seen: list[float] = []

    async def progress(done: float, total: float | None, message: str | None) -> None:
        seen.append(done)

    async with serve_asgi(app) as base:
        with anyio.fail_after(20):
            async with Client("t", "1", versions=HANDSHAKE_VERSIONS).connect_url(
                base + "/mcp", transport="streamable-http"
            ) as session:
                assert session.protocol_version == "2025-11-25"
                result = await session.call_tool("count", {"n": 3}, progress=progress)
                assert result.content == [types.TextContent(text="counted to 3")]
                assert seen == [1, 2, 3]
                read = await session.read_resource("memo://a")
                assert read.contents[0] == types.TextResourceContents(
                    uri="memo://a", text="memo a", mime_type="text/plain"
                )
                assert len(app.sessions) == 1
        # Closing the client ends its session on the server (DELETE).
        with anyio.fail_after(5):
            while app.sessions:
                await anyio.sleep(0.01)


@pytest.mark.anyio
async def test_errors_come_out_as_themselves() -> None:
    async with serve_asgi(StreamableHTTPApp(build())) as base:
        with anyio.fail_after(20), pytest.raises(McpError) as caught:
            async with Client("t", "1", versions=HANDSHAKE_VERSIONS).connect_url(base + "/mcp") as session:
                await session.call_tool("nope", {})
        assert caught.value.code == INVALID_PARAMS


@pytest.mark.anyio
async def test_auto_falls_back_to_legacy_sse() -> None:
    app = LegacySSEApp(build())
    async with serve_asgi(app) as base:
        with anyio.fail_after(20):
            async with Client("t", "1", versions=HANDSHAKE_VERSIONS).connect_url(base + "/sse") as session:
                result = await session.call_tool("count", {"n": 2})
                assert result.content == [types.TextContent(text="counted to 2")]
            with pytest.raises(HTTPTransportError) as refused:
                async with Client("t", "1", versions=HANDSHAKE_VERSIONS).connect_url(
                    base + "/sse", transport="streamable-http"
                ):
                    pass
            assert refused.value.status in (400, 404, 405)


def test_cli_serves_http_and_calls_a_url(tmp_path: object) -> None:
    port = free_port()
    url = f"http://127.0.0.1:{port}/mcp"
    with mcpbind_serving("examples/everything.py", "--transport", "http", port=port):
        listed = run_mcpbind("call", url, "tools/list")
        assert listed.returncode == 0, listed.stderr
        assert "add" in [tool["name"] for tool in json.loads(listed.stdout)]
        added = run_mcpbind("call", url, "tools/call", "add", "--arg", "a=2", "--arg", "b=40")
        assert added.returncode == 0, added.stderr
        assert json.loads(added.stdout)["structuredContent"] == {"result": 42}
        missing = run_mcpbind("call", url, "tools/call", "nope")
        assert missing.returncode == 1
        assert json.loads(missing.stderr)["code"] == INVALID_PARAMS
        assert "Traceback" not in missing.stderr
