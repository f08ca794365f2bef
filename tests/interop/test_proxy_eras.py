"""``mcpbind proxy`` between the official MCP Python SDK's client and its server, both ways:

* ``mcpbind proxy URL`` (a local stdio server) in front of the official SDK's server over
  Streamable HTTP (tests/interop/official_server_modern.py, which serves 2026-07-28 and the
  2025 versions; the proxy speaks 2026-07-28 to it), driven by the official client over stdio in
  its legacy mode (a 2025 session in front of a stateless server: the server's
  ``InputRequiredResult`` is answered by asking the client mid-call) and pinned to 2026-07-28
  (the rounds pass through): calls, elicitation, sampling, roots, a resource, a prompt, log
  messages;
* ``mcpbind proxy --port P -- ...`` in front of examples/conformance_server.py over stdio (which
  speaks 2026-07-28), a 2025 session subscribing to a resource and hearing of the changes;
* ``mcpbind proxy --port P -- ...`` in front of the official SDK's stdio server
  (tests/interop/official_server.py), the client cancelling a long call: the server's handler is
  cancelled (it writes what happened to a marker file).

The client runs on both anyio backends; the proxies and the servers are child processes.
"""

from __future__ import annotations

import sys
import warnings
from collections.abc import AsyncIterator, Iterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import anyio
import pytest

pytest.importorskip("mcp")

import mcp
import mcp.types
from mcp.client.session import ClientRequestContext
from pydantic import FileUrl

from tests.cli_harness import mcpbind_command
from tests.harness import child_env
from tests.interop.proxy_harness import listening_child, proxy_serving

pytestmark = pytest.mark.anyio

HERE = Path(__file__).parent
EXAMPLES = HERE.parents[1] / "examples"
MODERN = "2026-07-28"
TIMEOUT = 30.0
MODES = pytest.mark.parametrize("mode", ["legacy", MODERN])
ROOT = "file:///tmp/mcpbind-proxy-eras"


@pytest.fixture(scope="module")
def official_url() -> Iterator[str]:
    """The official SDK's server over Streamable HTTP on 127.0.0.1 (shared by the module)."""
    server = [sys.executable, str(HERE / "official_server_modern.py"), "http"]
    with listening_child(lambda port: [*server, str(port)], None, "the official SDK's server") as url:
        yield url


class Peer:
    def __init__(self) -> None:
        self.asked: list[str] = []
        self.logs: list[tuple[str, Any]] = []
        self.notified: list[str] = []

    async def elicit(self, context: ClientRequestContext, params: mcp.types.ElicitRequestParams) -> Any:
        self.asked.append(f"elicitation: {params.message}")
        return mcp.types.ElicitResult(action="accept", content={"name": "Lin"})

    async def sample(
        self, context: ClientRequestContext, params: mcp.types.CreateMessageRequestParams
    ) -> Any:
        content = params.messages[0].content
        self.asked.append(f"sampling: {getattr(content, 'text', '')}")
        text = mcp.types.TextContent(type="text", text="short")
        return mcp.types.CreateMessageResult(role="assistant", content=text, model="m9")

    async def roots(self, context: ClientRequestContext) -> mcp.types.ListRootsResult:
        self.asked.append("roots")
        return mcp.types.ListRootsResult(roots=[mcp.types.Root(uri=FileUrl(ROOT))])

    async def on_log(self, params: mcp.types.LoggingMessageNotificationParams) -> None:
        self.logs.append((params.level, params.data))

    async def on_message(self, message: Any) -> None:
        if isinstance(message, mcp.types.ServerNotification):
            self.notified.append(message.method)


@asynccontextmanager
async def through_stdio_proxy(url: str, mode: str, peer: Peer) -> AsyncIterator[mcp.Client]:
    """The official client over stdio to ``mcpbind proxy URL``."""
    command = mcpbind_command("proxy", url)
    params = mcp.StdioServerParameters(command=command[0], args=command[1:], env=child_env())
    client = mcp.Client(
        params,
        mode=mode,
        elicitation_callback=peer.elicit,
        sampling_callback=peer.sample,
        list_roots_callback=peer.roots,
        logging_callback=peer.on_log,
        message_handler=peer.on_message,
        log_level="info" if mode == MODERN else None,
        read_timeout_seconds=TIMEOUT,
    )
    with anyio.fail_after(TIMEOUT):
        async with client:
            assert client.protocol_version == ("2025-11-25" if mode == "legacy" else MODERN)
            yield client


def text_of(result: mcp.types.CallToolResult) -> str:
    assert not result.is_error, result
    return "".join(block.text for block in result.content if isinstance(block, mcp.types.TextContent))


@MODES
async def test_calls_and_questions_through_a_stdio_proxy(official_url: str, mode: str) -> None:
    peer = Peer()
    async with through_stdio_proxy(official_url, mode, peer) as client:
        assert {"add", "ask_name", "summarize", "where"} <= {
            t.name for t in (await client.list_tools()).tools
        }
        assert text_of(await client.call_tool("add", {"a": 3, "b": 4})) == "7"
        # the server's InputRequiredResult: asked of the client mid-call (legacy), or passed on
        assert text_of(await client.call_tool("ask_name", {})) == "hello Lin (accept)"
        assert text_of(await client.call_tool("summarize", {"text": "proxies"})) == "summary: short by m9"
        assert text_of(await client.call_tool("where", {})) == ROOT
        assert peer.asked == ["elicitation: What is your name?", "sampling: Summarize: proxies", "roots"]
        read = await client.read_resource("data://watched")
        assert [getattr(c, "text", None) for c in read.contents] == ["watched"]
        prompt = await client.get_prompt("greet", {"name": "Lin"})
        content = prompt.messages[0].content
        assert isinstance(content, mcp.types.TextContent) and content.text == "Say hello to Lin"


@MODES
async def test_log_messages_through_a_stdio_proxy(official_url: str, mode: str) -> None:
    peer = Peer()
    async with through_stdio_proxy(official_url, mode, peer) as client:
        if mode == "legacy":
            with warnings.catch_warnings():
                warnings.simplefilter("ignore", mcp.MCPDeprecationWarning)
                await client.set_logging_level("info")
        assert text_of(await client.call_tool("shout", {"message": "hey"})) == "HEY"
    assert peer.logs == [("warning", "hey")]


@pytest.fixture(scope="module")
def conformance_url() -> Iterator[str]:
    """``mcpbind proxy`` over HTTP in front of examples/conformance_server.py over stdio (which
    speaks 2026-07-28: the proxy negotiates it)."""
    with proxy_serving(sys.executable, str(EXAMPLES / "conformance_server.py"), "--stdio") as url:
        yield url


async def test_a_session_hears_of_a_stateless_server_changes(conformance_url: str) -> None:
    """A 2025 session subscribes to a resource of a server that speaks 2026-07-28, which changes
    it and adds a tool: the session hears of both."""
    peer = Peer()
    client = mcp.Client(conformance_url, mode="legacy", message_handler=peer.on_message)
    with anyio.fail_after(TIMEOUT):
        async with client:
            with warnings.catch_warnings():
                warnings.simplefilter("ignore", mcp.MCPDeprecationWarning)
                await client.subscribe_resource("test://watched-resource")
            await client.call_tool("test_update_resource", {})
            await client.call_tool("test_add_tool", {})
            wanted = {"notifications/resources/updated", "notifications/tools/list_changed"}
            with anyio.fail_after(10):
                while not wanted <= set(peer.notified):
                    await anyio.sleep(0.02)


# -- cancellation --------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def marker(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return tmp_path_factory.mktemp("proxy-cancel") / "events"


@pytest.fixture(scope="module")
def sleeper_url(marker: Path) -> Iterator[str]:
    """``mcpbind proxy`` over HTTP in front of the official SDK's stdio server, whose ``sleep``
    tool writes started / cancelled / finished to ``marker``."""
    server = [sys.executable, str(HERE / "official_server.py")]
    with proxy_serving(*server, env={"OFFICIAL_MARKER": str(marker)}) as url:
        yield url


@MODES
async def test_cancelling_a_call_cancels_it_upstream(sleeper_url: str, marker: Path, mode: str) -> None:
    marker.write_text("")
    client = mcp.Client(sleeper_url, mode=mode, read_timeout_seconds=TIMEOUT)
    with anyio.fail_after(TIMEOUT):
        async with client:
            async with anyio.create_task_group() as tasks:
                tasks.start_soon(client.call_tool, "sleep", {"seconds": 60})
                while marker.read_text() != "started\n":
                    await anyio.sleep(0.02)
                tasks.cancel_scope.cancel()
            while marker.read_text() == "started\n":
                await anyio.sleep(0.02)
            assert marker.read_text() == "started\ncancelled\n"
            assert text_of(await client.call_tool("add", {"a": 1, "b": 1})) == "2"
