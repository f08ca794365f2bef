"""mcpbind against the TypeScript SDK v2 (``@modelcontextprotocol/client`` and ``/server`` 2.4.0
from npm), which speaks MCP 2026-07-28, in both directions:

* its client (tests/interop/ts_v2_client.mjs, a node script printing what it saw as JSON) against
  examples/everything.py over stdio and examples/conformance_server.py over Streamable HTTP (served
  here, in-process), negotiating in its ``auto`` mode and pinned to 2026-07-28: the version, lists,
  calls with structured results and progress, a resource, a prompt, sampling and elicitation through
  multi round-trip results, and ``subscriptions/listen`` carrying a tool-list change;
* mcpbind's client (default negotiation) against a server on it (tests/interop/ts_v2_server.mjs)
  over stdio and Streamable HTTP on 127.0.0.1: the era, lists, calls, progress, a resource, a prompt
  and its tools that ask for input with ``inputRequired`` (elicitation and sampling).

The SDK is installed with npm into a cache folder on first use (``MCPBIND_NPM_PEERS``, as the other
npm peers); the tests skip when node or npm is missing, except under ``CI=true``, where that fails.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import tempfile
from collections.abc import AsyncIterator
from contextlib import AbstractAsyncContextManager, asynccontextmanager
from pathlib import Path
from typing import Any, NoReturn

import anyio
import pytest

from mcpbind.client.client import Client
from mcpbind.client.remote import RemoteServer
from mcpbind.client.subscriptions import ToolsListChanged
from mcpbind.runtime.context import RequestContext
from mcpbind.schema import v2025_11_25 as types
from tests.http_harness import serve_asgi
from tests.interop.child_http import child_http_server

pytestmark = pytest.mark.anyio

REPO = Path(__file__).resolve().parents[2]
HERE = Path(__file__).parent
CLIENT_SCRIPT = HERE / "ts_v2_client.mjs"
SERVER_SCRIPT = HERE / "ts_v2_server.mjs"
NPM_CACHE = Path(os.environ.get("MCPBIND_NPM_PEERS", Path(tempfile.gettempdir()) / "mcpbind-npm-peers"))
SDK_VERSION = "2.4.0"
PACKAGES = (
    f"@modelcontextprotocol/client@{SDK_VERSION}",
    f"@modelcontextprotocol/server@{SDK_VERSION}",
    "zod@4",
)
TIMEOUT = 60.0
MODERN = "2026-07-28"


def unavailable(reason: str) -> NoReturn:
    """Skip, or fail under CI=true, when the TypeScript SDK cannot be run here."""
    if os.environ.get("CI", "").lower() == "true":
        pytest.fail(f"{reason} (required under CI=true)")
    pytest.skip(reason)


def node() -> str:
    path = shutil.which("node")
    if path is None:
        unavailable("node is needed to run the TypeScript SDK v2")
    version = subprocess.run([path, "--version"], capture_output=True, text=True, check=True).stdout
    if int(version.strip().lstrip("v").split(".")[0]) < 20:
        unavailable(f"the TypeScript SDK v2 needs node 20 or later, this is {version.strip()}")
    return path


def installed_modules() -> Path:
    """The node_modules folder holding the SDK v2 packages, installed with npm on first use.

    Installed into a fresh folder and renamed into place, so a half-done install is never used."""
    home = NPM_CACHE / f"ts-sdk-v{SDK_VERSION}"
    modules = home / "node_modules"
    marker = modules / "@modelcontextprotocol" / "server" / "package.json"
    if marker.is_file() and (modules / "@modelcontextprotocol" / "client" / "package.json").is_file():
        return modules
    npm = shutil.which("npm")
    if npm is None:
        unavailable("npm is needed to install the TypeScript SDK v2")
    NPM_CACHE.mkdir(parents=True, exist_ok=True)
    staging = Path(tempfile.mkdtemp(prefix="ts-sdk-v2-", dir=NPM_CACHE))
    env = {**os.environ, "npm_config_update_notifier": "false", "npm_config_fund": "false"}
    (staging / "package.json").write_text('{"name": "mcpbind-ts-v2-peer", "private": true}\n')
    result = subprocess.run(
        [npm, "install", "--no-audit", "--silent", *PACKAGES],
        cwd=staging,
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
    )
    if result.returncode != 0:
        shutil.rmtree(staging, ignore_errors=True)
        unavailable(f"npm could not install the TypeScript SDK v2: {result.stderr.strip()[-500:]}")
    try:
        staging.rename(home)
    except OSError:  # another worker got there first
        shutil.rmtree(staging, ignore_errors=True)
    return modules


@pytest.fixture(scope="module")
def modules() -> Path:
    node()
    return installed_modules()


def child_env() -> dict[str, str]:
    """The environment for a child that runs mcpbind from this tree."""
    roots = [str(REPO / "runtime"), str(REPO / "generated"), str(REPO)]
    return {**os.environ, "PYTHONPATH": os.pathsep.join([*roots, os.environ.get("PYTHONPATH", "")])}


async def run_ts_client(modules: Path, negotiation: str, scenario: str, *target: str) -> dict[str, Any]:
    """Run the TypeScript client script; what it saw, as the JSON it prints."""
    with anyio.fail_after(TIMEOUT):
        done = await anyio.run_process(
            [node(), str(CLIENT_SCRIPT), str(modules), negotiation, scenario, *target],
            env=child_env(),
            check=False,
        )
    assert done.returncode == 0, done.stderr.decode(errors="replace")
    seen: dict[str, Any] = json.loads(done.stdout.decode().strip().splitlines()[-1])
    assert "error" not in seen, seen["error"]
    return seen


NEGOTIATIONS = pytest.mark.parametrize("negotiation", ["auto", MODERN])


# -- the TypeScript client against mcpbind's servers ----------------------------------------------


@NEGOTIATIONS
async def test_ts_client_against_everything_over_stdio(modules: Path, negotiation: str) -> None:
    seen = await run_ts_client(
        modules, negotiation, "everything", "stdio", sys.executable, str(REPO / "examples" / "everything.py")
    )
    assert seen["version"] == MODERN and seen["era"] == "modern"
    assert seen["serverName"] == "mcpbind-everything"
    assert {"add", "weather", "countdown", "write_note"} <= set(seen["tools"])
    assert seen["weather"] == {"city": "Oslo", "celsius": 21.5, "conditions": "sunny"}
    assert json.loads(seen["add"]) == {"result": 5}
    assert seen["countdown"] == "liftoff"
    assert seen["progress"] == [[1, 3], [2, 3], [3, 3]]
    assert seen["note"] == "from node"
    assert seen["prompt"] == [["user", "Give a short summary of this note: from node"]]


@NEGOTIATIONS
async def test_ts_client_against_the_conformance_server_over_http(modules: Path, negotiation: str) -> None:
    from examples.conformance_server import build_server

    async with serve_asgi(build_server().http_app()) as base:
        seen = await run_ts_client(modules, negotiation, "conformance", "http", f"{base}/mcp")
    assert seen["version"] == MODERN and seen["era"] == "modern"
    assert seen["serverName"] == "mcpbind-conformance"
    assert {"test_simple_text", "test_sampling", "test_elicitation", "test_add_tool"} <= set(seen["tools"])
    assert seen["simple"] == "This is a simple text response for testing."
    assert seen["progress"] == [0, 50, 100]
    assert seen["resource"] == "This is the content of the static text resource."
    assert seen["prompt"] == ["Prompt with arguments: arg1='a', arg2='b'"]
    # sampling and elicitation travel as input_required results the client fulfils and retries
    assert seen["sampling"] == "LLM response: echo: What is 2+2?"
    assert seen["elicitation"] == (
        'User response: action=accept, content={"username":"ada","email":"ada@example.com"}'
    )
    assert seen["seen"] == {"sampling": ["What is 2+2?"], "elicitation": ["Who are you?"]}
    # subscriptions/listen: acknowledged, then the tool-list change after test_add_tool
    assert seen["honored"] == {"toolsListChanged": True}
    assert seen["added"] == "Added tool test_added_tool_1"
    assert seen["toolsAfter"] == ["test_added_tool_1"]
    assert seen["closed"] == "local"


# -- mcpbind's client against a TypeScript server -----------------------------------------------


async def elicit(params: Any, ctx: RequestContext[Any]) -> types.ElicitResult:
    assert isinstance(params, types.ElicitRequestFormParams)
    assert params.message == "What is your name?"
    return types.ElicitResult(action="accept", content={"name": "Ada"})


async def sample(
    params: types.CreateMessageRequestParams, ctx: RequestContext[Any]
) -> types.CreateMessageResult:
    content = params.messages[0].content
    assert isinstance(content, types.TextContent)
    return types.CreateMessageResult(
        role="assistant", content=types.TextContent(text=f"{len(content.text)} characters"), model="m1"
    )


def ts_http_server(modules: Path) -> AbstractAsyncContextManager[str]:
    """The TypeScript server on a free port of 127.0.0.1, in a child process; its MCP URL."""
    return child_http_server(
        lambda port: [node(), str(SERVER_SCRIPT), str(modules), "http", str(port)], "TypeScript"
    )


@asynccontextmanager
async def connect(modules: Path, kind: str) -> AsyncIterator[RemoteServer]:
    client = Client("mcpbind-to-ts-v2", "1.0", elicitation=elicit, sampling=sample)
    if kind == "stdio":
        args = [str(SERVER_SCRIPT), str(modules), "stdio"]
        async with client.connect_stdio(node(), args, timeout=20) as server:
            yield server
        return
    async with ts_http_server(modules) as url, client.connect_url(url, timeout=20) as server:
        yield server


def text_of(result: types.CallToolResult) -> str:
    assert result.is_error is not True, result
    [content] = result.content
    assert isinstance(content, types.TextContent)
    return content.text


TRANSPORTS = pytest.mark.parametrize("kind", ["stdio", "http"])


@TRANSPORTS
async def test_mcpbind_client_against_a_ts_server(modules: Path, kind: str) -> None:
    with anyio.fail_after(TIMEOUT):
        async with connect(modules, kind) as server:
            assert server.stateless and server.protocol_version == MODERN
            assert server.server_info.name == "ts-v2-peer"
            tools = await server.list_tools()
            assert [tool.name for tool in tools.tools] == ["add", "count", "ask_name", "summarize", "touch"]
            added = await server.call_tool("add", {"a": 20, "b": 22})
            assert text_of(added) == "42" and added.structured_content == {"sum": 42}
            steps: list[float] = []

            async def on_progress(progress: float, total: float | None, message: str | None) -> None:
                steps.append(progress)

            assert text_of(await server.call_tool("count", {"n": 3}, progress=on_progress)) == "counted"
            assert steps == [1, 2, 3]
            read = await server.read_resource("ts://greeting")
            [contents] = read.contents
            assert isinstance(contents, types.TextResourceContents)
            assert contents.text == "hello from typescript"
            prompt = await server.get_prompt("greet", {"name": "Ada"})
            message = prompt.messages[0].content
            assert isinstance(message, types.TextContent) and message.text == "Please greet Ada."


@TRANSPORTS
async def test_ts_tools_ask_through_multi_round_trip_results(modules: Path, kind: str) -> None:
    with anyio.fail_after(TIMEOUT):
        async with connect(modules, kind) as server:
            # the retry carries the elicitation's answer and echoes the server's requestState
            assert text_of(await server.call_tool("ask_name")) == "hello Ada (accept, asked-once)"
            summary = await server.call_tool("summarize", {"text": "mcpbind"})
            assert text_of(summary) == "summary: 18 characters"  # "Summarize: mcpbind"


@TRANSPORTS
async def test_ts_server_sends_a_tool_list_change_to_a_listen_stream(modules: Path, kind: str) -> None:
    with anyio.fail_after(TIMEOUT):
        async with connect(modules, kind) as server, server.listen(tools=True) as changes:
            assert changes.acknowledged.tools_list_changed is True
            assert text_of(await server.call_tool("touch")) == "touched"
            event = await changes.__anext__()
            assert isinstance(event, ToolsListChanged)
