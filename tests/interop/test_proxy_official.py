"""The official MCP Python SDK's client (``mcp.Client``) through ``mcpbind proxy --port P -- ...``
to the TypeScript reference server ``@modelcontextprotocol/server-everything`` over stdio (a
server of the 2025 era): in its legacy mode (a 2025-11-25 session) and pinned to 2026-07-28
(stateless, in front of a server of a session: the proxy holds the server's call while a
question it asks mid-call travels to the client as an ``InputRequiredResult`` and back in the
retry). Every feature of server-everything a client can exercise: tools (plain, structured,
annotated, image, resource links and embedded resources, progress, sampling, elicitation, roots),
resources and templates, subscriptions, prompts with arguments, completion, log messages, and
cancelling a long call.

One proxy (and so one server-everything) serves the module's tests; the tests that depend on
server-everything's per-connection state (its roots are asked once per connection) start their
own. The client runs on both anyio backends; the proxy and the server are child processes.
"""

from __future__ import annotations

import base64
import json
import warnings
from collections.abc import AsyncIterator, Callable, Iterator
from contextlib import asynccontextmanager
from typing import Any

import anyio
import pytest

pytest.importorskip("mcp")

import mcp
import mcp.types
import mcp_types
from mcp.client.session import ClientRequestContext
from mcp.shared.exceptions import MCPError
from mcp.shared.subscriptions import ResourceUpdated
from pydantic import FileUrl

from tests.interop.proxy_harness import everything_proxy

pytestmark = pytest.mark.anyio

MODERN = "2026-07-28"
TIMEOUT = 30.0
MODES = pytest.mark.parametrize("mode", ["legacy", MODERN])
ROOT = "file:///tmp/mcpbind-proxy-interop"
# The tools server-everything registers only for a client declaring sampling, elicitation and
# roots: the proxy declares them to it, on behalf of its clients.
CONDITIONAL_TOOLS = {"trigger-sampling-request", "trigger-elicitation-request", "get-roots-list"}


@pytest.fixture(scope="module")
def everything_url() -> Iterator[str]:
    with everything_proxy() as url:
        yield url


class Peer:
    """What the official client's callbacks were asked and received."""

    def __init__(self, roots: list[str] | None = None) -> None:
        self.asked: list[tuple[str, Any]] = []
        self.logs: list[tuple[str, Any]] = []
        self.updated: list[str] = []
        self.roots = roots if roots is not None else [ROOT]

    async def sample(
        self, context: ClientRequestContext, params: mcp.types.CreateMessageRequestParams
    ) -> mcp.types.CreateMessageResult:
        content = params.messages[0].content
        self.asked.append(("sampling", getattr(content, "text", None)))
        answer = mcp.types.TextContent(type="text", text="sampled through the proxy")
        return mcp.types.CreateMessageResult(role="assistant", content=answer, model="proxy-test")

    async def elicit(
        self, context: ClientRequestContext, params: mcp.types.ElicitRequestParams
    ) -> mcp.types.ElicitResult:
        self.asked.append(("elicitation", params.message))
        return mcp.types.ElicitResult(action="accept", content={"name": "Ada", "check": True, "integer": 7})

    async def list_roots(self, context: ClientRequestContext) -> mcp.types.ListRootsResult:
        self.asked.append(("roots", None))
        return mcp.types.ListRootsResult(
            roots=[mcp.types.Root(uri=FileUrl(uri), name="work") for uri in self.roots]
        )

    async def on_log(self, params: mcp.types.LoggingMessageNotificationParams) -> None:
        self.logs.append((params.level, params.data))

    async def on_message(self, message: Any) -> None:
        if isinstance(message, mcp.types.ResourceUpdatedNotification):
            self.updated.append(str(message.params.uri))


@asynccontextmanager
async def connect(url: str, mode: str, peer: Peer | None = None) -> AsyncIterator[mcp.Client]:
    peer = peer or Peer()
    client = mcp.Client(
        url,
        mode=mode,
        sampling_callback=peer.sample,
        elicitation_callback=peer.elicit,
        list_roots_callback=peer.list_roots,
        logging_callback=peer.on_log,
        message_handler=peer.on_message,
        log_level="debug" if mode == MODERN else None,
        read_timeout_seconds=TIMEOUT,
    )
    with anyio.fail_after(TIMEOUT):
        async with client:
            assert client.protocol_version == ("2025-11-25" if mode == "legacy" else MODERN)
            yield client


def texts(result: mcp.types.CallToolResult) -> list[str]:
    assert not result.is_error, result
    return [block.text for block in result.content if isinstance(block, mcp.types.TextContent)]


async def until(condition: Callable[[], bool], what: str) -> None:
    """Until ``condition()`` holds (polled), at most 10 s; else the test fails, waiting for ``what``."""
    with anyio.move_on_after(10):
        while not condition():
            await anyio.sleep(0.02)
        return
    raise AssertionError(f"no {what} within 10 s")


@MODES
async def test_tools_listed_and_called(everything_url: str, mode: str) -> None:
    async with connect(everything_url, mode) as client:
        if mode == "legacy":  # (a pinned 2026-07-28 client asks no server/discover)
            assert client.server_info is not None and client.server_info.name == "mcp-servers/everything"
        tools = {tool.name: tool for tool in (await client.list_tools()).tools}
        assert {"echo", "get-sum", "get-structured-content", "get-tiny-image"} <= set(tools)
        assert CONDITIONAL_TOOLS <= set(tools)
        assert tools["get-structured-content"].output_schema is not None
        assert texts(await client.call_tool("echo", {"message": "through"})) == ["Echo: through"]
        assert texts(await client.call_tool("get-sum", {"a": 2, "b": 40})) == ["The sum of 2 and 40 is 42."]
        # the client checks structuredContent against the outputSchema listed
        weather = await client.call_tool("get-structured-content", {"location": "Chicago"})
        assert weather.structured_content is not None
        assert set(weather.structured_content) == {"temperature", "conditions", "humidity"}
        assert json.loads(texts(weather)[0]) == weather.structured_content

        annotated = await client.call_tool(
            "get-annotated-message", {"messageType": "error", "includeImage": True}
        )
        text, image = annotated.content
        assert isinstance(text, mcp.types.TextContent) and text.annotations is not None
        assert text.annotations.priority == 1.0 and text.annotations.audience == ["user", "assistant"]
        assert isinstance(image, mcp.types.ImageContent) and image.mime_type == "image/png"
        assert image.annotations is not None and image.annotations.audience == ["user"]
        tiny = await client.call_tool("get-tiny-image", {})
        [png] = [block for block in tiny.content if isinstance(block, mcp.types.ImageContent)]
        assert base64.b64decode(png.data).startswith(b"\x89PNG")

        links = await client.call_tool("get-resource-links", {"count": 2})
        uris = [str(b.uri) for b in links.content if isinstance(b, mcp.types.ResourceLink)]
        assert len(uris) == 2 and all(uri.startswith("demo://resource/") for uri in uris)
        embedded = await client.call_tool("get-resource-reference", {"resourceType": "Text", "resourceId": 3})
        [resource] = [b for b in embedded.content if isinstance(b, mcp.types.EmbeddedResource)]
        assert str(resource.resource.uri) == "demo://resource/dynamic/text/3"


@MODES
async def test_progress_of_a_long_call(everything_url: str, mode: str) -> None:
    seen: list[tuple[float, float | None]] = []

    async def on_progress(progress: float, total: float | None, message: str | None) -> None:
        seen.append((progress, total))

    async with connect(everything_url, mode) as client:
        done = await client.call_tool(
            "trigger-long-running-operation", {"duration": 0.3, "steps": 3}, progress_callback=on_progress
        )
    assert texts(done) == ["Long running operation completed. Duration: 0.3 seconds, Steps: 3."]
    assert seen == [(1, 3), (2, 3), (3, 3)]


@MODES
async def test_sampling_and_elicitation_answered_by_the_client(everything_url: str, mode: str) -> None:
    """Asked mid-call by the server; in 2026-07-28 each question ends a round of the call with
    an ``InputRequiredResult`` that the official client answers, and retries."""
    peer = Peer()
    async with connect(everything_url, mode, peer) as client:
        sampled = texts(await client.call_tool("trigger-sampling-request", {"prompt": "two words"}))
        elicited = texts(await client.call_tool("trigger-elicitation-request", {}))
    assert peer.asked == [
        ("sampling", "Resource trigger-sampling-request context: two words"),
        ("elicitation", "Please provide inputs for the following fields:"),
    ]
    assert sampled[0].startswith("LLM sampling result:")
    assert json.loads(sampled[0].split(":", 1)[1])["content"]["text"] == "sampled through the proxy"
    assert elicited[0] == "✅ User provided the requested information!"
    assert "- Name: Ada" in elicited[1] and "- Favorite Integer: 7" in elicited[1]


async def test_the_rounds_a_2026_client_sees(everything_url: str) -> None:
    """What the proxy gives a 2026-07-28 client for a question server-everything asks mid-call:
    an ``InputRequiredResult`` with the ``elicitation/create`` request, whose retry (with the
    answer and the ``requestState``) goes on with the server's held call. A retry with a state
    the proxy never gave is refused."""
    async with connect(everything_url, MODERN) as client:
        session = client.session
        first = await session.call_tool("trigger-elicitation-request", {}, allow_input_required=True)
        assert isinstance(first, mcp_types.InputRequiredResult)
        assert first.request_state is not None and first.input_requests is not None
        [(key, asked)] = first.input_requests.items()
        assert asked.method == "elicitation/create"
        declined: mcp_types.InputResponses = {key: mcp_types.ElicitResult(action="decline")}
        final = await session.call_tool(
            "trigger-elicitation-request",
            {},
            input_responses=declined,
            request_state=first.request_state,
            allow_input_required=True,
        )
        assert isinstance(final, mcp.types.CallToolResult)
        assert texts(final)[0] == "❌ User declined to provide the requested information."
        with pytest.raises(MCPError) as refused:
            await session.call_tool(
                "trigger-elicitation-request", {}, input_responses=declined, request_state="forged"
            )
        assert refused.value.error.code == -32602 and "requestState is unknown" in refused.value.error.message


@MODES
async def test_resources_and_templates(everything_url: str, mode: str) -> None:
    async with connect(everything_url, mode) as client:
        listed = {str(resource.uri) for resource in (await client.list_resources()).resources}
        assert "demo://resource/static/document/architecture.md" in listed
        templates = (await client.list_resource_templates()).resource_templates
        assert {template.uri_template for template in templates} == {
            "demo://resource/dynamic/text/{resourceId}",
            "demo://resource/dynamic/blob/{resourceId}",
        }
        document = (await client.read_resource("demo://resource/static/document/architecture.md")).contents
        assert isinstance(document[0], mcp.types.TextResourceContents)
        assert document[0].text.startswith("# Everything Server")
        [text] = (await client.read_resource("demo://resource/dynamic/text/5")).contents
        assert isinstance(text, mcp.types.TextResourceContents) and text.text.startswith("Resource 5:")
        [blob] = (await client.read_resource("demo://resource/dynamic/blob/5")).contents
        assert isinstance(blob, mcp.types.BlobResourceContents)
        assert base64.b64decode(blob.blob).decode().startswith("Resource 5:")


@MODES
async def test_prompts_and_completion(everything_url: str, mode: str) -> None:
    async with connect(everything_url, mode) as client:
        prompts = {prompt.name: prompt for prompt in (await client.list_prompts()).prompts}
        assert {"simple-prompt", "args-prompt", "completable-prompt", "resource-prompt"} <= set(prompts)
        arguments = prompts["args-prompt"].arguments or []
        assert [(a.name, a.required) for a in arguments] == [("city", True), ("state", False)]
        got = await client.get_prompt("args-prompt", {"city": "Oslo", "state": "Viken"})
        [message] = got.messages
        assert isinstance(message.content, mcp.types.TextContent)
        assert message.content.text == "What's weather in Oslo, Viken?"
        with_resource = await client.get_prompt(
            "resource-prompt", {"resourceType": "Text", "resourceId": "2"}
        )
        embedded = [
            m.content for m in with_resource.messages if isinstance(m.content, mcp.types.EmbeddedResource)
        ]
        assert [str(e.resource.uri) for e in embedded] == ["demo://resource/dynamic/text/2"]

        prompt = mcp.types.PromptReference(type="ref/prompt", name="completable-prompt")
        department = await client.complete(prompt, {"name": "department", "value": "S"})
        assert department.completion.values == ["Sales", "Support"]
        # the second argument's values depend on the first, given as context
        name = await client.complete(prompt, {"name": "name", "value": ""}, {"department": "Sales"})
        assert name.completion.values == ["David", "Eve", "Frank"]
        template = mcp.types.ResourceTemplateReference(
            type="ref/resource", uri="demo://resource/dynamic/text/{resourceId}"
        )
        ids = await client.complete(template, {"name": "resourceId", "value": "7"})
        assert ids.completion.values == ["7"]


async def test_log_messages_and_resource_updates_of_a_session(everything_url: str) -> None:
    """A 2025 session: ``logging/setLevel``, then the server's log messages (outside any call);
    ``resources/subscribe``, then the server's ``notifications/resources/updated``."""
    peer = Peer()
    uri = "demo://resource/dynamic/text/1"
    async with connect(everything_url, "legacy", peer) as client:
        await client.list_tools()
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", mcp.MCPDeprecationWarning)
            await client.set_logging_level("debug")
            await client.subscribe_resource(uri)
        # server-everything acknowledges the subscription with a log message
        await until(
            lambda: ("info", f"Received Subscribe Resource request for URI: {uri} ") in peer.logs, "log"
        )
        # each toggle starts sending (one at once, then every 5 s), or stops
        started = texts(await client.call_tool("toggle-subscriber-updates", {}))
        try:
            assert started[0].startswith("Started simulated resource updated notifications")
            await until(lambda: uri in peer.updated, "resource update")
        finally:
            await client.call_tool("toggle-subscriber-updates", {})
        before = len(peer.logs)
        started = texts(await client.call_tool("toggle-simulated-logging", {}))
        try:
            assert started[0].startswith("Started simulated, random-leveled logging")
            await until(lambda: len(peer.logs) > before, "simulated log message")
        finally:
            await client.call_tool("toggle-simulated-logging", {})
        assert str(peer.logs[before][1]).endswith("message")
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", mcp.MCPDeprecationWarning)
            await client.unsubscribe_resource(uri)


async def test_resource_updates_on_a_listen_stream(everything_url: str) -> None:
    """A 2026-07-28 client listens for a resource's updates: they come on its listen stream."""
    uri = "demo://resource/dynamic/text/3"
    async with connect(everything_url, MODERN) as client:
        async with client.listen(resource_subscriptions=[uri]) as changes:
            assert changes.honored.resource_subscriptions == [uri]
            texts(await client.call_tool("toggle-subscriber-updates", {}))
            try:
                with anyio.fail_after(6):  # (sent at once, then every 5 s)
                    event = await changes.__anext__()
            finally:
                await client.call_tool("toggle-subscriber-updates", {})
    assert isinstance(event, ResourceUpdated) and event.uri == uri


@MODES
async def test_cancelling_a_long_call(everything_url: str, mode: str) -> None:
    """The client gives up on a long call after its first progress notification: the call
    ends at once and the proxy and its server go on serving."""
    started = anyio.Event()

    async def on_progress(progress: float, total: float | None, message: str | None) -> None:
        started.set()

    async with connect(everything_url, mode) as client:
        with anyio.move_on_after(TIMEOUT) as waiting:
            async with anyio.create_task_group() as tasks:

                async def long_call() -> None:
                    await client.call_tool(
                        "trigger-long-running-operation",
                        {"duration": 60, "steps": 600},
                        progress_callback=on_progress,
                    )

                tasks.start_soon(long_call)
                await started.wait()
                tasks.cancel_scope.cancel()
        assert not waiting.cancelled_caught
        assert texts(await client.call_tool("echo", {"message": "after"})) == ["Echo: after"]


@MODES
async def test_roots_of_the_client(mode: str) -> None:
    """server-everything asks its client's roots once per connection, mid-call (so it has a
    proxy of its own here); a 2025 session tells of a change, and the server asks again."""
    peer = Peer()
    with everything_proxy() as url:
        async with connect(url, mode, peer) as client:
            listed = texts(await client.call_tool("get-roots-list", {}))
            assert peer.asked == [("roots", None)]
            assert f"URI: {ROOT}" in listed[0]
            # syncRoots logs what it received, mid-call: to the call's client
            await until(lambda: ("info", "Roots updated: 1 root(s) received from client") in peer.logs, "log")
            if mode == "legacy":
                peer.roots = [ROOT, f"{ROOT}-2"]
                with warnings.catch_warnings():
                    warnings.simplefilter("ignore", mcp.MCPDeprecationWarning)
                    await client.send_roots_list_changed()
                await until(lambda: len(peer.asked) == 2, "roots asked again")
                await until(
                    lambda: ("info", "Roots updated: 2 root(s) received from client") in peer.logs, "log"
                )
                listed = texts(await client.call_tool("get-roots-list", {}))
                assert f"URI: {ROOT}-2" in listed[0]
