"""``Client.connect_url`` and the CLI over HTTP: Streamable HTTP, the legacy fallback, errors."""

from __future__ import annotations

import json
import socket
import subprocess
import sys
import time

import anyio
import httpx
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
from tests.harness import child_env
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


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port: int = sock.getsockname()[1]
        return port


def test_cli_serves_http_and_calls_a_url(tmp_path: object) -> None:
    port = free_port()
    url = f"http://127.0.0.1:{port}/mcp"
    serve = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "mcpbind",
            "serve",
            "examples/everything.py",
            "--transport",
            "http",
            "--port",
            str(port),
        ],
        env=child_env(),
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
    )
    try:
        deadline = time.monotonic() + 20
        while True:
            try:
                httpx.get(url, timeout=1)
                break
            except httpx.TransportError:
                if time.monotonic() > deadline or serve.poll() is not None:
                    raise AssertionError("the server did not start") from None
                time.sleep(0.05)

        def call(*args: str) -> subprocess.CompletedProcess[str]:
            return subprocess.run(
                [sys.executable, "-m", "mcpbind", "call", url, *args],
                env=child_env(),
                capture_output=True,
                text=True,
                timeout=60,
            )

        listed = call("tools/list")
        assert listed.returncode == 0, listed.stderr
        assert "add" in [tool["name"] for tool in json.loads(listed.stdout)]
        added = call("tools/call", "add", "--arg", "a=2", "--arg", "b=40")
        assert added.returncode == 0, added.stderr
        assert json.loads(added.stdout)["structuredContent"] == {"result": 42}
        missing = call("tools/call", "nope")
        assert missing.returncode == 1
        assert json.loads(missing.stderr)["code"] == INVALID_PARAMS
        assert "Traceback" not in missing.stderr
    finally:
        serve.terminate()
        serve.wait(timeout=10)
