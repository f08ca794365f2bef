"""``subscriptions/listen`` (MCP 2026-07-28) and the notifications of stateless requests, in
memory, with raw JSON: what a 2026 client sees on the wire.

The server is the conformance fixture (``examples/conformance_server.py``), whose
``test_add_tool`` and ``test_update_resource`` change it from outside, or a small one where a
test needs a server without some feature. The server's end of the pair says which received
request each message it sends belongs to (:class:`Related`), as a Streamable HTTP transport
would be told: everything of a listen stream must be sent as its listen request's, progress and
log messages as their request's.
"""

from __future__ import annotations

import json
import logging
import uuid
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Any

import anyio
import pytest

from examples.conformance_server import ADDED_TOOL_PREFIX, WATCHED_URI, build_server
from mcpbind.protocol.errors import INTERNAL_ERROR, METHOD_NOT_FOUND
from mcpbind.protocol.wire import RequestId
from mcpbind.runtime.context import RequestContext
from mcpbind.server.listen import Listener
from mcpbind.server.log_bridge import forward_logging
from mcpbind.server.server import Server
from mcpbind.transports.base import DEFAULT_MAX_MESSAGE_SIZE
from mcpbind.transports.memory import MemoryTransport

pytestmark = pytest.mark.anyio

VERSION = "2026-07-28"
META: dict[str, Any] = {
    "io.modelcontextprotocol/protocolVersion": VERSION,
    "io.modelcontextprotocol/clientCapabilities": {},
}
SUBSCRIPTION_ID = "io.modelcontextprotocol/subscriptionId"
TOOLS_CHANGED = "notifications/tools/list_changed"
PROMPTS_CHANGED = "notifications/prompts/list_changed"
RESOURCES_CHANGED = "notifications/resources/list_changed"
UPDATED = "notifications/resources/updated"
ACKNOWLEDGED = "notifications/subscriptions/acknowledged"
REPLY_TIMEOUT = 2.0  # the most one expected message may take
CHANGE_TIMEOUT = 1.0  # "within a second or so of the change"


class Related:
    """The server's end of a memory pair that remembers which received request (if any) each
    message it sent belongs to, as a transport routing by request is told."""

    def __init__(self, inner: MemoryTransport) -> None:
        self.inner = inner
        self.related: dict[bytes, RequestId | None] = {}

    async def receive(self) -> bytes:
        return await self.inner.receive()

    async def send(self, message: bytes) -> None:
        self.related[message] = None
        await self.inner.send(message)

    async def send_related(self, message: bytes, related: RequestId, final: bool = False) -> None:
        self.related[message] = related
        await self.inner.send(message)

    async def aclose(self) -> None:
        await self.inner.aclose()


class Peer:
    """A 2026 client writing raw JSON; ``related_of`` tells what request the server sent a
    received message as belonging to."""

    def __init__(self, transport: MemoryTransport, server_end: Related, close_input: Any) -> None:
        self.transport = transport
        self.server_end = server_end
        self.close_input = close_input
        self.raw: dict[int, bytes] = {}

    async def send(self, message: dict[str, Any]) -> None:
        await self.transport.send(json.dumps(message).encode())

    async def request(
        self, ident: RequestId, method: str, params: dict[str, Any] | None = None, *, meta: Any = META
    ) -> None:
        body = dict(params or {})
        if meta is not None:
            body["_meta"] = {**meta, **body.get("_meta", {})}
        await self.send({"jsonrpc": "2.0", "id": ident, "method": method, "params": body})

    async def listen(self, ident: RequestId, **notifications: Any) -> dict[str, Any]:
        """Open a listen stream; its acknowledgment (which must come first)."""
        await self.request(ident, "subscriptions/listen", {"notifications": notifications})
        ack = await self.receive()
        assert ack["method"] == ACKNOWLEDGED, ack
        assert ack["params"]["_meta"] == {SUBSCRIPTION_ID: ident}
        assert self.related_of(ack) == ident
        return ack

    async def cancel(self, ident: RequestId) -> None:
        params = {"requestId": ident, "reason": "done listening"}
        await self.send({"jsonrpc": "2.0", "method": "notifications/cancelled", "params": params})

    async def receive(self, timeout: float = REPLY_TIMEOUT) -> dict[str, Any]:
        with anyio.fail_after(timeout):
            data = await self.transport.receive()
        message: dict[str, Any] = json.loads(data)
        self.raw[id(message)] = data
        return message

    def related_of(self, message: dict[str, Any]) -> RequestId | None:
        return self.server_end.related[self.raw[id(message)]]

    async def until(
        self, ident: RequestId, timeout: float = REPLY_TIMEOUT
    ) -> tuple[list[dict[str, Any]], dict[str, Any]]:
        """The messages received up to the response to ``ident``, and that response."""
        others: list[dict[str, Any]] = []
        while True:
            message = await self.receive(timeout)
            if message.get("id") == ident and "method" not in message:
                return others, message
            others.append(message)

    async def call(
        self, ident: RequestId, tool: str, /, **arguments: Any
    ) -> tuple[list[dict[str, Any]], dict[str, Any]]:
        await self.request(ident, "tools/call", {"name": tool, "arguments": arguments})
        return await self.until(ident)


@asynccontextmanager
async def serving(server: Server) -> AsyncIterator[Peer]:
    """``server`` running over a memory pair whose server end is a :class:`Related`."""
    to_server, server_in = anyio.create_memory_object_stream[bytes](1024)
    to_client, client_in = anyio.create_memory_object_stream[bytes](1024)
    server_end = Related(MemoryTransport(to_client, server_in, DEFAULT_MAX_MESSAGE_SIZE))
    client_end = MemoryTransport(to_server, client_in, DEFAULT_MAX_MESSAGE_SIZE)
    async with anyio.create_task_group() as tg:
        tg.start_soon(server.run, server_end)
        with anyio.fail_after(20):
            yield Peer(client_end, server_end, to_server.aclose)
        tg.cancel_scope.cancel()


def tagged(message: dict[str, Any], method: str, ident: RequestId) -> bool:
    return message.get("method") == method and message["params"].get("_meta") == {SUBSCRIPTION_ID: ident}


# --------------------------------------------------------------------------------------------
# The acknowledgment
# --------------------------------------------------------------------------------------------


async def test_the_acknowledgment_names_what_the_server_honours() -> None:
    async with serving(build_server()) as peer:
        too_long = "test://" + "x" * 9000  # over max_uri_length: refused, so not honoured
        ack = await peer.listen(
            "all",
            toolsListChanged=True,
            promptsListChanged=True,
            resourcesListChanged=True,
            resourceSubscriptions=[WATCHED_URI, too_long, WATCHED_URI, "test://static-text"],
        )
        assert ack == {
            "jsonrpc": "2.0",
            "method": ACKNOWLEDGED,
            "params": {
                "_meta": {SUBSCRIPTION_ID: "all"},
                "notifications": {
                    "toolsListChanged": True,
                    "promptsListChanged": True,
                    "resourcesListChanged": True,
                    "resourceSubscriptions": [WATCHED_URI, "test://static-text"],
                },
            },
        }
        # Only what was asked: nothing else is acknowledged.
        ack = await peer.listen(7, toolsListChanged=True, promptsListChanged=False)
        assert ack["params"]["notifications"] == {"toolsListChanged": True}
        assert ack["params"]["_meta"] == {SUBSCRIPTION_ID: 7}  # a number stays a number
        ack = await peer.listen(8)
        assert ack["params"]["notifications"] == {}


async def test_kinds_the_server_does_not_have_are_not_acknowledged() -> None:
    server = Server("tools-only", "1.0")

    @server.tool()
    def ping_tool() -> str:
        return "pong"

    async with serving(server) as peer:
        ack = await peer.listen(
            1,
            toolsListChanged=True,
            promptsListChanged=True,
            resourcesListChanged=True,
            resourceSubscriptions=["test://anything"],
        )
        assert ack["params"]["notifications"] == {"toolsListChanged": True}


# --------------------------------------------------------------------------------------------
# Changes on the stream
# --------------------------------------------------------------------------------------------


async def test_a_tool_added_arrives_on_the_stream_tagged_within_a_second() -> None:
    async with serving(build_server()) as peer:
        await peer.listen("L", toolsListChanged=True)
        await peer.request(1, "tools/call", {"name": "test_add_tool"})
        with anyio.fail_after(CHANGE_TIMEOUT):
            others, answer = await peer.until(1)
            while not others:  # the change may come after the answer
                others.append(await peer.receive())
        assert answer["result"]["content"][0]["text"] == f"Added tool {ADDED_TOOL_PREFIX}1"
        [change] = others
        assert change == {
            "jsonrpc": "2.0",
            "method": TOOLS_CHANGED,
            "params": {"_meta": {SUBSCRIPTION_ID: "L"}},
        }
        assert peer.related_of(change) == "L"
        # The tool is there, and each call adds another.
        await peer.request(2, "tools/list")
        _, listed = await peer.until(2)
        assert f"{ADDED_TOOL_PREFIX}1" in {tool["name"] for tool in listed["result"]["tools"]}
        others, answer = await peer.call(3, "test_add_tool")
        assert answer["result"]["content"][0]["text"] == f"Added tool {ADDED_TOOL_PREFIX}2"
        if not others:
            others.append(await peer.receive())
        assert [m["method"] for m in others] == [TOOLS_CHANGED]


async def test_resource_updates_reach_only_the_streams_subscribed_to_the_uri() -> None:
    async with serving(build_server()) as peer:
        await peer.listen("watched", resourceSubscriptions=[WATCHED_URI])
        await peer.listen("other", resourceSubscriptions=["test://static-text"], toolsListChanged=True)
        others, _ = await peer.call(1, "test_update_resource")
        if not others:
            others.append(await peer.receive())
        [update] = others
        assert update == {
            "jsonrpc": "2.0",
            "method": UPDATED,
            "params": {"_meta": {SUBSCRIPTION_ID: "watched"}, "uri": WATCHED_URI},
        }
        assert peer.related_of(update) == "watched"
        # The other stream got nothing of it: the next thing it gets is the tool change.
        others, _ = await peer.call(2, "test_add_tool")
        if not others:
            others.append(await peer.receive())
        assert others == [
            {"jsonrpc": "2.0", "method": TOOLS_CHANGED, "params": {"_meta": {SUBSCRIPTION_ID: "other"}}}
        ]
        # The resource did change.
        await peer.request(3, "resources/read", {"uri": WATCHED_URI})
        _, read = await peer.until(3)
        assert read["result"]["contents"][0]["text"].endswith("(version 1)")


async def test_the_filter_is_honoured() -> None:
    server = build_server()
    async with serving(server) as peer:
        await peer.listen("tools", toolsListChanged=True)
        await server.prompts_changed()
        await server.resources_changed()
        await server.resource_updated(WATCHED_URI)
        await server.tools_changed()
        change = await peer.receive(CHANGE_TIMEOUT)
        assert tagged(change, TOOLS_CHANGED, "tools"), change
        # Each kind asked for comes, once per change.
        await peer.listen("prompts", promptsListChanged=True, resourcesListChanged=True)
        await server.prompts_changed()
        await server.resources_changed()
        received = [await peer.receive(CHANGE_TIMEOUT), await peer.receive(CHANGE_TIMEOUT)]
        assert [m["method"] for m in received] == [PROMPTS_CHANGED, RESOURCES_CHANGED]
        assert all(m["params"]["_meta"] == {SUBSCRIPTION_ID: "prompts"} for m in received)


async def test_several_streams_on_one_connection_each_get_the_change_with_their_own_id() -> None:
    async with serving(build_server()) as peer:
        await peer.listen("a", toolsListChanged=True)
        await peer.listen("b", toolsListChanged=True)
        await peer.listen("c", promptsListChanged=True)
        others, _ = await peer.call(1, "test_add_tool")
        while len(others) < 2:
            others.append(await peer.receive(CHANGE_TIMEOUT))
        assert sorted(m["params"]["_meta"][SUBSCRIPTION_ID] for m in others) == ["a", "b"]
        assert {m["method"] for m in others} == {TOOLS_CHANGED}
        assert {peer.related_of(m) for m in others} == {"a", "b"}


async def test_changes_not_sent_yet_are_sent_once() -> None:
    server = build_server()
    async with serving(server) as peer:
        await peer.listen("L", toolsListChanged=True, promptsListChanged=True)
        # Changed with no chance for the stream to send in between: one of each kind.
        server.remove_tool("test_simple_text")
        server.remove_prompt("test_simple_prompt")
        server.remove_tool("test_image_content")
        server.remove_prompt("test_prompt_with_image")
        server.remove_tool("test_audio_content")
        first, second = await peer.receive(CHANGE_TIMEOUT), await peer.receive(CHANGE_TIMEOUT)
        assert [first["method"], second["method"]] == [TOOLS_CHANGED, PROMPTS_CHANGED]
        await peer.request(1, "tools/list")
        others, _ = await peer.until(1)
        assert others == []  # no more of them


def test_a_stream_that_is_not_read_keeps_a_bounded_backlog(caplog: pytest.LogCaptureFixture) -> None:
    listener = Listener(
        None,  # type: ignore[arg-type]
        "L",
        frozenset({TOOLS_CHANGED}),
        frozenset(f"test://{n}" for n in range(10)),
        max_backlog=3,
    )
    with caplog.at_level(logging.WARNING, logger="mcpbind"):
        for _ in range(3):
            listener.offer(TOOLS_CHANGED)  # coalesced: no loss, no warning
        assert list(listener.pending) == [(TOOLS_CHANGED, "")]
        assert not caplog.records
        listener.offer(PROMPTS_CHANGED)  # not asked for
        listener.offer(UPDATED, "test://elsewhere")  # not subscribed
        assert len(listener.pending) == 1
        for n in range(5):
            listener.offer(UPDATED, f"test://{n}")
    # The oldest were dropped, with one warning.
    assert list(listener.pending) == [(UPDATED, "test://2"), (UPDATED, "test://3"), (UPDATED, "test://4")]
    assert listener.dropped == 3
    assert len([r for r in caplog.records if "dropping" in r.getMessage()]) == 1


async def test_a_connection_may_hold_half_its_request_places_as_streams() -> None:
    server = Server("small", "1.0", max_concurrent_requests=4)

    @server.tool()
    def noop() -> str:
        return "ok"

    async with serving(server) as peer:
        await peer.listen(1, toolsListChanged=True)
        await peer.listen(2, toolsListChanged=True)
        await peer.request(3, "subscriptions/listen", {"notifications": {"toolsListChanged": True}})
        _, refused = await peer.until(3)
        assert refused["error"]["code"] == INTERNAL_ERROR
        assert "Too many listen streams" in refused["error"]["message"]
        # The connection is still served; a stream cancelled frees its place.
        _, answer = await peer.call(4, "noop")
        assert answer["result"]["content"] == [{"type": "text", "text": "ok"}]
        await peer.cancel(1)
        await peer.listen(5, toolsListChanged=True)


# --------------------------------------------------------------------------------------------
# The end of a stream
# --------------------------------------------------------------------------------------------


async def test_a_cancelled_stream_ends_without_a_response() -> None:
    server = build_server()
    async with serving(server) as peer:
        await peer.listen("L", toolsListChanged=True)
        await peer.cancel("L")
        await peer.request(1, "tools/list")  # after the cancellation, on the same pipe
        others, _ = await peer.until(1)
        assert others == []
        # No change reaches it any more, and it was never answered.
        others, _ = await peer.call(2, "test_add_tool")
        await peer.request(3, "tools/list")
        more, _ = await peer.until(3)
        assert others + more == []
        assert not server._listeners.listeners


async def test_the_end_of_input_ends_the_stream_with_a_result() -> None:
    async with serving(build_server()) as peer:
        await peer.listen("L", toolsListChanged=True)
        await peer.listen(5, resourceSubscriptions=[WATCHED_URI])
        await peer.close_input()
        with anyio.fail_after(CHANGE_TIMEOUT):  # at once, not after the grace period
            ends = [await peer.receive(), await peer.receive()]
        ends.sort(key=lambda m: str(m["id"]))
        for end, ident in zip(ends, [5, "L"], strict=True):
            assert end["id"] == ident
            result = end["result"]
            assert result["resultType"] == "complete"
            assert result["_meta"][SUBSCRIPTION_ID] == ident
            assert result["_meta"]["io.modelcontextprotocol/serverInfo"]["name"] == "mcpbind-conformance"
            assert set(result) == {"resultType", "_meta"}


async def test_a_server_ending_its_streams_answers_them_after_what_is_pending() -> None:
    server = build_server()
    async with serving(server) as peer:
        await peer.listen("L", toolsListChanged=True)
        await server.tools_changed()
        await server.end_listen_streams()
        change = await peer.receive()
        assert tagged(change, TOOLS_CHANGED, "L")
        end = await peer.receive()
        assert end["id"] == "L" and end["result"]["_meta"][SUBSCRIPTION_ID] == "L"
        # The connection goes on.
        await peer.request(1, "tools/list")
        others, _ = await peer.until(1)
        assert others == []


async def test_the_end_of_the_lifespan_ends_the_streams() -> None:
    entered, ended = anyio.Event(), anyio.Event()

    @asynccontextmanager
    async def lifespan(server: Server) -> AsyncIterator[None]:
        entered.set()
        yield
        ended.set()

    server = Server("with-lifespan", "1.0", lifespan=lifespan)

    @server.tool()
    def noop() -> str:
        return ""

    stop = anyio.Event()

    async def host() -> None:
        async with server.serving():
            await stop.wait()

    async with anyio.create_task_group() as tg:
        tg.start_soon(host)
        await entered.wait()  # the host entered the lifespan: it ends it
        async with serving(server) as peer:  # joins the host's lifespan
            await peer.listen("L", toolsListChanged=True)
            stop.set()
            end = await peer.receive()
            assert end["id"] == "L" and end["result"]["_meta"][SUBSCRIPTION_ID] == "L"
            assert ended.is_set()


async def test_ending_an_inline_session_answers_its_streams() -> None:
    server = build_server()
    _to_server, server_in = anyio.create_memory_object_stream[bytes](16)
    to_client, client_in = anyio.create_memory_object_stream[bytes](16)
    server_end = MemoryTransport(to_client, server_in, DEFAULT_MAX_MESSAGE_SIZE)
    async with anyio.create_task_group() as tg:
        session = server.inline_session(server_end, spawn=tg.start_soon)
        listen = {
            "jsonrpc": "2.0",
            "id": "L",
            "method": "subscriptions/listen",
            "params": {"_meta": META, "notifications": {"toolsListChanged": True}},
        }
        tg.start_soon(session.feed, json.dumps(listen).encode())
        with anyio.fail_after(REPLY_TIMEOUT):
            ack = json.loads(await client_in.receive())
            assert ack["method"] == ACKNOWLEDGED
            await server.end_session(session)
            end = json.loads(await client_in.receive())
        assert end["id"] == "L" and end["result"]["_meta"][SUBSCRIPTION_ID] == "L"


# --------------------------------------------------------------------------------------------
# Sessions of handshake versions, and modern connections outside a stream
# --------------------------------------------------------------------------------------------


async def test_a_2025_session_still_gets_plain_notifications_next_to_a_listener() -> None:
    server = build_server()
    async with serving(server) as old, serving(server) as new:
        initialize = {
            "protocolVersion": "2025-11-25",
            "capabilities": {},
            "clientInfo": {"name": "old", "version": "1"},
        }
        await old.request("init", "initialize", initialize, meta=None)
        await old.until("init")
        await old.send({"jsonrpc": "2.0", "method": "notifications/initialized"})
        await old.request("sub", "resources/subscribe", {"uri": WATCHED_URI}, meta=None)
        await old.until("sub")
        await new.listen("L", toolsListChanged=True, resourceSubscriptions=[WATCHED_URI])

        # The 2025 session calls; both hear of it, each its own way.
        await old.request(1, "tools/call", {"name": "test_add_tool"}, meta=None)
        others, _ = await old.until(1)
        while not others:
            others.append(await old.receive(CHANGE_TIMEOUT))
        assert others == [{"jsonrpc": "2.0", "method": TOOLS_CHANGED, "params": {}}]
        assert tagged(await new.receive(CHANGE_TIMEOUT), TOOLS_CHANGED, "L")

        await old.request(2, "tools/call", {"name": "test_update_resource"}, meta=None)
        others, _ = await old.until(2)
        while not others:
            others.append(await old.receive(CHANGE_TIMEOUT))
        assert others == [{"jsonrpc": "2.0", "method": UPDATED, "params": {"uri": WATCHED_URI}}]
        update = await new.receive(CHANGE_TIMEOUT)
        assert tagged(update, UPDATED, "L") and update["params"]["uri"] == WATCHED_URI


async def test_a_modern_connection_gets_no_plain_list_changes() -> None:
    server = build_server()
    async with serving(server) as peer:
        await peer.request(0, "server/discover")
        await peer.until(0)
        others, _ = await peer.call(1, "test_add_tool")
        await server.tools_changed()
        await server.prompts_changed()
        await server.resources_changed()
        await server.resource_updated(WATCHED_URI)
        await peer.request(2, "tools/list")
        more, _ = await peer.until(2)
        assert others + more == []


# --------------------------------------------------------------------------------------------
# Progress and log messages of a stateless request
# --------------------------------------------------------------------------------------------


def chatty_server() -> Server:
    server = Server("chatty", "1.0", logging=True)

    @server.tool()
    async def chat(ctx: RequestContext) -> str:
        await ctx.report_progress(1, 2, "half")
        await ctx.log("debug", "a detail")
        await ctx.log("info", "some news")
        await ctx.log("error", "a failure")
        with forward_logging(ctx, "chatty.bridge"):
            logging.getLogger("chatty.bridge").warning("from logging")
            logging.getLogger("chatty.bridge").debug("a bridged detail")
        return "done"

    return server


async def test_progress_and_log_messages_go_with_their_request_at_the_level_it_set() -> None:
    async with serving(chatty_server()) as peer:
        meta = {**META, "io.modelcontextprotocol/logLevel": "info", "progressToken": "p"}
        await peer.request("c", "tools/call", {"name": "chat", "arguments": {}, "_meta": meta})
        others, answer = await peer.until("c")
        assert answer["result"]["content"] == [{"type": "text", "text": "done"}]
        # What the logging bridge queued may come after the answer (the transport here takes
        # nothing at once): it still comes, as the request's.
        while not any(m["params"].get("data") == "from logging" for m in others):
            others.append(await peer.receive())
        progress = [m for m in others if m["method"] == "notifications/progress"]
        assert [m["params"] for m in progress] == [
            {"progressToken": "p", "progress": 1, "total": 2, "message": "half"}
        ]
        logs = [m["params"] for m in others if m["method"] == "notifications/message"]
        assert [(p["level"], p["data"]) for p in logs] == [
            ("info", "some news"),
            ("error", "a failure"),
            ("warning", "from logging"),
        ]
        assert {peer.related_of(m) for m in others} == {"c"}


async def test_no_log_messages_for_a_request_that_set_no_level() -> None:
    async with serving(chatty_server()) as peer:
        await peer.request("c", "tools/call", {"name": "chat", "arguments": {}})
        others, answer = await peer.until("c")
        assert answer["result"]["content"] == [{"type": "text", "text": "done"}]
        assert others == []  # no progress asked for either


@pytest.mark.parametrize(
    ("method", "params"),
    [
        ("logging/setLevel", {"level": "debug"}),
        ("resources/subscribe", {"uri": WATCHED_URI}),
        ("resources/unsubscribe", {"uri": WATCHED_URI}),
        ("ping", {}),
    ],
)
async def test_methods_the_stateless_protocol_dropped_are_refused(
    method: str, params: dict[str, Any]
) -> None:
    async with serving(build_server()) as peer:
        await peer.request(1, method, params)  # with the 2026 _meta
        _, answer = await peer.until(1)
        assert answer["error"]["code"] == METHOD_NOT_FOUND, answer
        # On a connection already speaking 2026, even without _meta.
        await peer.request(0, "server/discover")
        await peer.until(0)
        await peer.request(2, method, params, meta=None)
        _, answer = await peer.until(2)
        assert answer["error"]["code"] == METHOD_NOT_FOUND, answer


async def test_the_everything_demo_tells_a_listener_of_a_new_note() -> None:
    from examples.everything import server as everything

    async with serving(everything) as peer:
        ack = await peer.listen("notes", resourceSubscriptions=["notes://index"], toolsListChanged=True)
        assert ack["params"]["notifications"] == {
            "toolsListChanged": True,
            "resourceSubscriptions": ["notes://index"],
        }
        # (the demo's notes are the module's: a name no other test wrote)
        others, _ = await peer.call(1, "write_note", name=f"listen-{uuid.uuid4()}", text="heard")
        if not others:
            others.append(await peer.receive(CHANGE_TIMEOUT))
        assert others == [
            {
                "jsonrpc": "2.0",
                "method": UPDATED,
                "params": {"_meta": {SUBSCRIPTION_ID: "notes"}, "uri": "notes://index"},
            }
        ]


async def test_a_stateless_handler_telling_its_client_of_a_change_sends_no_plain_notification() -> None:
    server = Server("by-hand", "1.0")

    @server.tool()
    async def touch(ctx: RequestContext) -> str:
        await ctx.send_tool_list_changed()
        await ctx.send_prompt_list_changed()
        await ctx.send_resource_list_changed()
        await ctx.send_resource_updated("test://x")
        return "touched"

    async with serving(server) as peer:
        others, answer = await peer.call(1, "touch")
        assert answer["result"]["content"] == [{"type": "text", "text": "touched"}]
        await peer.request(2, "tools/list")
        more, _ = await peer.until(2)
        assert others + more == []
