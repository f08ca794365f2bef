"""``subscriptions/listen`` over a real stdio pipe, where every listen stream shares the pipe
with the other requests: the conformance fixture server (``examples/conformance_server.py
--stdio``) as a child process on both backends, raw JSON lines from this side on both."""

from __future__ import annotations

import sys
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import anyio
import pytest

from mcpbind.protocol.errors import METHOD_NOT_FOUND
from mcpbind.transports.stdio import spawn_stdio_server
from tests.transports.stdio.children import ROOT, TEST_TIMEOUT, Raw, cancelled, child_env, request

pytestmark = pytest.mark.anyio

CONFORMANCE_SERVER = ROOT / "examples" / "conformance_server.py"
META: dict[str, Any] = {
    "io.modelcontextprotocol/protocolVersion": "2026-07-28",
    "io.modelcontextprotocol/clientCapabilities": {},
    "io.modelcontextprotocol/clientInfo": {"name": "raw-test", "version": "0"},
}
SUBSCRIPTION_ID = "io.modelcontextprotocol/subscriptionId"
TOOLS_CHANGED = "notifications/tools/list_changed"
UPDATED = "notifications/resources/updated"
WATCHED_URI = "test://watched-resource"


def modern(ident: object, method: str, **params: Any) -> bytes:
    return request(ident, method, {"_meta": META, **params})


async def until(raw: Raw, ident: object) -> tuple[list[dict[str, Any]], dict[str, Any]]:
    """What came up to the response to ``ident``, and the response."""
    others: list[dict[str, Any]] = []
    while True:
        message = await raw.receive()
        if message.get("id") == ident and "method" not in message:
            return others, message
        others.append(message)


@asynccontextmanager
async def conformance_server(backend: str, stderr_path: Path) -> AsyncIterator[Raw]:
    with open(stderr_path, "w") as stderr, anyio.fail_after(TEST_TIMEOUT):
        async with spawn_stdio_server(
            sys.executable,
            [str(CONFORMANCE_SERVER), "--stdio", "--backend", backend],
            env=child_env(),
            stderr=stderr,
        ) as transport:
            yield Raw(transport)


async def open_listen(raw: Raw, ident: object, **notifications: Any) -> dict[str, Any]:
    await raw.send(modern(ident, "subscriptions/listen", notifications=notifications))
    ack = await raw.receive()
    assert ack["method"] == "notifications/subscriptions/acknowledged", ack
    assert ack["params"]["_meta"] == {SUBSCRIPTION_ID: ident}
    return ack


async def test_a_change_made_on_the_pipe_arrives_on_the_listen_stream(
    server_backend: str, tmp_path: Path
) -> None:
    async with conformance_server(server_backend, tmp_path / "stderr") as raw:
        await raw.send(modern(0, "server/discover"))
        _, discovered = await until(raw, 0)
        assert discovered["result"]["capabilities"]["tools"] == {"listChanged": True}
        ack = await open_listen(
            raw, "listen-1", toolsListChanged=True, resourceSubscriptions=[WATCHED_URI, "test://static-text"]
        )
        assert ack["params"]["notifications"] == {
            "toolsListChanged": True,
            "resourceSubscriptions": [WATCHED_URI, "test://static-text"],
        }

        # A tool added by a call on the same pipe, while the stream is open: promptly (a few
        # seconds on a loaded machine; a lost notification fails the receive at REPLY_TIMEOUT).
        start = anyio.current_time()
        await raw.send(modern(1, "tools/call", name="test_add_tool"))
        others, answer = await until(raw, 1)
        while not others:
            others.append(await raw.receive())
        assert anyio.current_time() - start < 4.0
        assert answer["result"]["content"][0]["text"] == "Added tool test_added_tool_1"
        assert others == [
            {"jsonrpc": "2.0", "method": TOOLS_CHANGED, "params": {"_meta": {SUBSCRIPTION_ID: "listen-1"}}}
        ]

        # A resource update, for the URI subscribed to.
        await raw.send(modern(2, "tools/call", name="test_update_resource"))
        others, _ = await until(raw, 2)
        while not others:
            others.append(await raw.receive())
        assert others == [
            {
                "jsonrpc": "2.0",
                "method": UPDATED,
                "params": {"_meta": {SUBSCRIPTION_ID: "listen-1"}, "uri": WATCHED_URI},
            }
        ]
        await raw.send(modern(3, "tools/list"))
        more, listed = await until(raw, 3)
        assert more == []
        assert "test_added_tool_1" in {tool["name"] for tool in listed["result"]["tools"]}


async def test_a_modern_connection_without_a_stream_gets_no_list_change(
    server_backend: str, tmp_path: Path
) -> None:
    async with conformance_server(server_backend, tmp_path / "stderr") as raw:
        await raw.send(modern(0, "server/discover"))
        await until(raw, 0)
        await raw.send(modern(1, "tools/call", name="test_add_tool"))
        others, _ = await until(raw, 1)
        await raw.send(modern(2, "tools/call", name="test_update_resource"))
        more, _ = await until(raw, 2)
        await raw.send(modern(3, "tools/list"))
        last, _ = await until(raw, 3)
        assert others + more + last == []
        # Nor does a stream that did not ask for tools get them untagged, or at all.
        await open_listen(raw, 9, promptsListChanged=True)
        await raw.send(modern(4, "tools/call", name="test_add_tool"))
        others, _ = await until(raw, 4)
        await raw.send(modern(5, "tools/list"))
        more, _ = await until(raw, 5)
        assert others + more == []


async def test_cancelling_a_listen_stream_ends_it_without_a_response(
    server_backend: str, tmp_path: Path
) -> None:
    async with conformance_server(server_backend, tmp_path / "stderr") as raw:
        await open_listen(raw, 1, toolsListChanged=True)
        await open_listen(raw, 2, toolsListChanged=True)
        await raw.send(cancelled(1))
        await raw.send(modern(3, "tools/call", name="test_add_tool"))
        others, _ = await until(raw, 3)
        while not others:
            others.append(await raw.receive())
        # Only the stream still open hears of it; the cancelled one was never answered.
        assert others == [
            {"jsonrpc": "2.0", "method": TOOLS_CHANGED, "params": {"_meta": {SUBSCRIPTION_ID: 2}}}
        ]
        await raw.send(modern(4, "tools/list"))
        more, _ = await until(raw, 4)
        assert more == []


async def test_closing_stdin_ends_the_streams_with_their_results(server_backend: str, tmp_path: Path) -> None:
    async with conformance_server(server_backend, tmp_path / "stderr") as raw:
        await open_listen(raw, "a", toolsListChanged=True)
        await open_listen(raw, "b", resourceSubscriptions=[WATCHED_URI])
        await raw.transport._send_stream.aclose()  # the end of the server's input
        with anyio.fail_after(2.0):  # at once, not after the grace period (5 s)
            ends = [await raw.receive(), await raw.receive()]
        assert sorted(end["id"] for end in ends) == ["a", "b"]
        for end in ends:
            assert end["result"]["resultType"] == "complete"
            assert end["result"]["_meta"][SUBSCRIPTION_ID] == end["id"]
        with anyio.fail_after(5.0):
            await raw.transport.process.wait()
        assert raw.transport.returncode == 0


@pytest.mark.parametrize("method", ["ping", "logging/setLevel", "resources/subscribe"])
async def test_methods_the_stateless_protocol_dropped_are_refused(
    server_backend: str, tmp_path: Path, method: str
) -> None:
    params = {"level": "info"} if method == "logging/setLevel" else {"uri": WATCHED_URI}
    async with conformance_server(server_backend, tmp_path / "stderr") as raw:
        await raw.send(modern(1, method, **({} if method == "ping" else params)))
        _, answer = await until(raw, 1)
        assert answer["error"]["code"] == METHOD_NOT_FOUND
        await raw.send(modern(2, "server/discover"))
        await until(raw, 2)
        await raw.send(request(3, method, None if method == "ping" else params))  # no _meta
        _, answer = await until(raw, 3)
        assert answer["error"]["code"] == METHOD_NOT_FOUND
