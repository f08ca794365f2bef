"""mcpbind's Streamable HTTP client against other implementations' servers, each in a child
process listening on 127.0.0.1:

* the official Python SDK (``mcp``): an ``MCPServer`` app under uvicorn, in SSE mode with an
  event store (so the server can close a call's stream and the client resume it), in JSON
  response mode, and stateless;
* the TypeScript reference server ``@modelcontextprotocol/server-everything`` from npm, in
  ``streamableHttp`` mode, installed into a cache folder with npm. It listens on every
  interface unless made not to, so it runs with the loopback-only preload of the shared
  conformance kit (``../shared/conformance/loopback-only.cjs``, next to the repository).

The peers' tests skip when their prerequisite (``mcp``; node and npm; the preload) is missing,
except under ``CI=true``, where a missing node, npm or preload fails the test.
"""

from __future__ import annotations

import importlib.util
import os
import shutil
import socket
import subprocess
import sys
import textwrap
from collections.abc import AsyncIterator, Iterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import NoReturn

import anyio
import httpx
import pytest

from mcpbind.client.client import Client
from mcpbind.client.remote import RemoteServer
from mcpbind.runtime.session import RequestContext
from mcpbind.schema import v2025_11_25 as types
from mcpbind.transports.http.client import StreamableHTTPTransport, open_streamable_http
from mcpbind.versions import HANDSHAKE_VERSIONS
from tests.interop import proxy_harness

pytestmark = pytest.mark.anyio

REPO = Path(__file__).resolve().parents[2]
LOOPBACK_PRELOAD = REPO.parent / "shared" / "conformance" / "loopback-only.cjs"
TEST_TIMEOUT = 30.0
START_TIMEOUT = 60.0


def in_ci() -> bool:
    return os.environ.get("CI", "").lower() == "true"


def unavailable(reason: str) -> NoReturn:
    """Skip, or fail under CI=true, when a peer cannot be run here."""
    if in_ci():
        pytest.fail(f"{reason} (required under CI=true)")
    pytest.skip(reason)


def text_of(result: types.CallToolResult) -> str:
    assert result.is_error is not True, result
    block = result.content[0]
    assert isinstance(block, types.TextContent)
    return block.text


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port: int = sock.getsockname()[1]
        return port


def wait_listening(process: subprocess.Popen[bytes], port: int, what: str) -> None:
    """Until ``port`` accepts connections (or the child died, or time ran out)."""
    import time

    deadline = time.monotonic() + START_TIMEOUT
    while time.monotonic() < deadline:
        if process.poll() is not None:
            raise RuntimeError(f"{what} exited with {process.returncode} before listening")
        try:
            socket.create_connection(("127.0.0.1", port), timeout=0.5).close()
            return
        except OSError:
            time.sleep(0.05)
    raise RuntimeError(f"{what} did not listen on port {port} within {START_TIMEOUT} s")


def stop(process: subprocess.Popen[bytes]) -> None:
    if process.poll() is None:
        process.terminate()
        try:
            process.wait(5)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait(5)


@asynccontextmanager
async def connect(
    url: str, client: Client | None = None, http: httpx.AsyncClient | None = None
) -> AsyncIterator[tuple[RemoteServer, StreamableHTTPTransport]]:
    with anyio.fail_after(TEST_TIMEOUT):
        async with (
            open_streamable_http(url, reconnect_delay=5.0, http_client=http) as transport,
            (client or Client("mcpbind-http-interop", "0.0.1", versions=HANDSHAKE_VERSIONS)).connect(
                transport
            ) as session,
        ):
            yield session, transport


# -- the official Python SDK ------------------------------------------------------------------

OFFICIAL_APP = textwrap.dedent(
    '''
    """An MCPServer over Streamable HTTP: python - MODE PORT (MODE: sse, json or stateless)."""
    import sys
    import warnings
    from typing import Any

    import anyio
    import uvicorn
    from mcp.server.mcpserver import Context, MCPServer
    from mcp.server.streamable_http import EventMessage, EventStore
    from mcp.shared.exceptions import MCPDeprecationWarning
    from mcp.types import SamplingMessage, TextContent

    warnings.filterwarnings("ignore", category=MCPDeprecationWarning)
    mode, port = sys.argv[1], int(sys.argv[2])


    class MemoryStore(EventStore):
        """Every event of every stream, kept for replay after a Last-Event-ID."""

        def __init__(self) -> None:
            self.events: list[tuple[str, str, Any]] = []  # (event id, stream id, message)

        async def store_event(self, stream_id, message):
            event_id = str(len(self.events) + 1)
            self.events.append((event_id, stream_id, message))
            return event_id

        async def replay_events_after(self, last_event_id, send_callback):
            ids = [event[0] for event in self.events]
            if last_event_id not in ids:
                return None
            position = ids.index(last_event_id)
            stream = self.events[position][1]
            for event_id, stream_id, message in self.events[position + 1 :]:
                if stream_id == stream and message is not None:
                    await send_callback(EventMessage(message, event_id))
            return stream


    server = MCPServer("official-http", version="1.2.3", log_level="WARNING")


    @server.tool(description="Adds two integers.")
    def add(a: int, b: int) -> int:
        return a + b


    @server.tool(description="Reports progress, step by step.")
    async def count(steps: int, ctx: Context) -> str:
        for step in range(1, steps + 1):
            await ctx.report_progress(step, steps)
        return f"counted {steps}"


    @server.tool(description="Closes its own stream halfway: the client must resume it.")
    async def poll(ctx: Context) -> str:
        await ctx.report_progress(1, 2)
        await ctx.close_sse_stream()
        await anyio.sleep(0.3)
        await ctx.report_progress(2, 2)
        return "polled"


    @server.tool(description="Asks the client's model.")
    async def ask(question: str, ctx: Context) -> str:
        message = SamplingMessage(role="user", content=TextContent(type="text", text=question))
        answer = await ctx.session.create_message(messages=[message], max_tokens=10)
        return "model said: " + answer.content.text


    @server.resource("memo://greeting", mime_type="text/plain")
    def greeting() -> str:
        return "hello over http"


    app = server.streamable_http_app(
        json_response=mode == "json",
        stateless_http=mode == "stateless",
        event_store=MemoryStore() if mode == "sse" else None,
        retry_interval=100 if mode == "sse" else None,
    )
    uvicorn.Server(uvicorn.Config(app, host="127.0.0.1", port=port, log_level="warning")).run()
    '''
)


@pytest.fixture(scope="module", params=["sse", "json", "stateless"])
def official_server(request: pytest.FixtureRequest) -> Iterator[tuple[str, str]]:
    """(mode, URL) of a running official server."""
    if importlib.util.find_spec("mcp") is None:
        pytest.skip("the official SDK (mcp) is not installed; nox -s interop installs it")
    mode: str = request.param
    port = free_port()
    process = subprocess.Popen(
        [sys.executable, "-c", OFFICIAL_APP, mode, str(port)], stdin=subprocess.DEVNULL
    )
    try:
        wait_listening(process, port, "the official SDK server")
        yield mode, f"http://127.0.0.1:{port}/mcp"
    finally:
        stop(process)


async def test_official_tools_and_resources(official_server: tuple[str, str]) -> None:
    mode, url = official_server
    async with connect(url) as (session, transport):
        assert session.server_info.name == "official-http"
        assert session.protocol_version == "2025-11-25"
        assert transport.protocol_version == "2025-11-25"
        assert (transport.session_id is None) == (mode == "stateless")
        names = {tool.name for tool in (await session.list_tools()).tools}
        assert {"add", "count", "poll", "ask"} <= names
        assert text_of(await session.call_tool("add", {"a": 2, "b": 40})) == "42"
        contents = (await session.read_resource("memo://greeting")).contents
        assert len(contents) == 1 and isinstance(contents[0], types.TextResourceContents)
        assert contents[0].text == "hello over http"
        await session.ping()


@pytest.mark.parametrize("official_server", ["sse", "stateless"], indirect=True)
async def test_official_progress_on_the_call_stream(official_server: tuple[str, str]) -> None:
    _, url = official_server
    seen: list[tuple[float, float | None]] = []

    async def on_progress(progress: float, total: float | None, message: str | None) -> None:
        seen.append((progress, total))

    async with connect(url) as (session, _):
        assert text_of(await session.call_tool("count", {"steps": 3}, progress=on_progress)) == "counted 3"
    assert seen == [(1, 3), (2, 3), (3, 3)]


@pytest.mark.parametrize("official_server", ["sse"], indirect=True)
async def test_official_sampling_request_answered_over_post(official_server: tuple[str, str]) -> None:
    _, url = official_server

    async def sample(
        params: types.CreateMessageRequestParams, ctx: RequestContext
    ) -> types.CreateMessageResult:
        question = params.messages[0].content
        assert isinstance(question, types.TextContent)
        return types.CreateMessageResult(
            role="assistant", content=types.TextContent(text=question.text[::-1]), model="reverser"
        )

    client = Client("mcpbind-http-interop", "0.0.1", sampling=sample, versions=HANDSHAKE_VERSIONS)
    async with connect(url, client) as (session, _):
        assert text_of(await session.call_tool("ask", {"question": "olleh"})) == "model said: hello"


@pytest.mark.parametrize("official_server", ["sse"], indirect=True)
async def test_official_stream_closed_by_the_server_is_resumed(official_server: tuple[str, str]) -> None:
    _, url = official_server
    seen: list[float] = []
    resumed: list[str] = []

    async def on_progress(progress: float, total: float | None, message: str | None) -> None:
        seen.append(progress)

    async def on_request(request: httpx.Request) -> None:
        if request.method == "GET" and "last-event-id" in request.headers:
            resumed.append(request.headers["last-event-id"])

    async with (
        httpx.AsyncClient(event_hooks={"request": [on_request]}) as http,
        connect(url, http=http) as (session, _),
    ):
        # reconnect_delay is 5 s: finishing well within it shows the server's retry (100 ms) was used.
        with anyio.fail_after(3):
            assert text_of(await session.call_tool("poll", {}, progress=on_progress)) == "polled"
    assert seen == [1, 2]
    assert len(resumed) == 1


@pytest.mark.parametrize("official_server", ["sse", "json"], indirect=True)
async def test_official_session_is_deleted_on_close(official_server: tuple[str, str]) -> None:
    _, url = official_server
    async with connect(url) as (_, transport):
        session_id = transport.session_id
        version = transport.protocol_version
    assert session_id is not None and version is not None
    ping = b'{"jsonrpc": "2.0", "id": 1, "method": "ping"}'
    headers = {
        "mcp-session-id": session_id,
        "mcp-protocol-version": version,
        "content-type": "application/json",
        "accept": "application/json, text/event-stream",
    }
    async with httpx.AsyncClient() as http:
        response = await http.post(url, content=ping, headers=headers)
    assert response.status_code == 404


# -- the TypeScript reference server (server-everything) --------------------------------------


def install_everything() -> Path:
    """The server-everything entry point (installed with npm on first use), and the loopback
    preload it runs with."""
    if not LOOPBACK_PRELOAD.is_file():
        unavailable(f"the loopback-only preload is missing ({LOOPBACK_PRELOAD})")
    return proxy_harness.install_everything()


@pytest.fixture(scope="module")
def everything_server() -> Iterator[str]:
    entry = install_everything()
    port = free_port()
    env = {**os.environ, "PORT": str(port), "NODE_OPTIONS": f"--require {LOOPBACK_PRELOAD}"}
    node = shutil.which("node")
    assert node is not None
    process = subprocess.Popen(
        [node, str(entry), "streamableHttp"],
        env=env,
        stdin=subprocess.DEVNULL,
        stdout=subprocess.DEVNULL,
        cwd=proxy_harness.NPM_CACHE,
    )
    try:
        wait_listening(process, port, "server-everything")
        yield f"http://127.0.0.1:{port}/mcp"
    finally:
        stop(process)


def listening_addresses(port: int) -> set[str]:
    """The local addresses bound to ``port`` (Linux: from /proc/net/tcp*)."""
    found: set[str] = set()
    for table in ("/proc/net/tcp", "/proc/net/tcp6"):
        try:
            lines = Path(table).read_text().splitlines()[1:]
        except OSError:
            continue
        for line in lines:
            local, state = line.split()[1], line.split()[3]
            address, hex_port = local.split(":")
            if state == "0A" and int(hex_port, 16) == port:
                found.add(address)
    return found


async def test_everything_echo_and_sum(everything_server: str) -> None:
    async with connect(everything_server) as (session, transport):
        assert transport.session_id is not None
        assert transport.protocol_version == session.protocol_version
        names = {tool.name for tool in (await session.list_tools()).tools}
        assert {"echo", "get-sum"} <= names
        assert text_of(await session.call_tool("echo", {"message": "hi there"})) == "Echo: hi there"
        assert "5" in text_of(await session.call_tool("get-sum", {"a": 2, "b": 3}))


async def test_everything_listens_on_loopback_only(everything_server: str) -> None:
    port = int(everything_server.rsplit(":", 1)[1].split("/")[0])
    addresses = listening_addresses(port)
    if not addresses:
        pytest.skip("cannot read the socket table here")
    assert addresses == {"0100007F"}, addresses  # 127.0.0.1, and nothing else
