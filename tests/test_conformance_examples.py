"""The conformance fixtures behave as the official suite's scenarios expect, in memory.

``examples/conformance_server.py`` exposes the tools, resources and prompts the server scenarios
call; ``examples/conformance_client.py`` plays the client scenarios. Here both run over the
in-memory transport on asyncio and trio, checking what each scenario checks (and a little more),
so that a regression shows up in ``nox -s tests`` and not only in ``nox -s conformance``.
"""

from __future__ import annotations

import base64
import io
import json
import wave
from typing import Any

import anyio
import msgspec
import pytest

from examples.conformance_client import (
    SCENARIOS,
    ScenarioFailed,
    accept_with_defaults,
    defaults_of,
)
from examples.conformance_client import (
    main as client_main,
)
from examples.conformance_server import (
    JSON_SCHEMA_2020_12,
    JSON_SCHEMA_2020_12_TOOL,
    ProfileWithDefaults,
    build_server,
)
from mcpbind.client.client import Client
from mcpbind.client.remote import RemoteServer
from mcpbind.protocol.errors import McpError
from mcpbind.runtime.session import RequestContext
from mcpbind.schema import v2025_11_25 as types
from mcpbind.server.elicitation import requested_schema
from mcpbind.server.server import Server
from mcpbind.transports.http.client import open_streamable_http
from mcpbind.transports.http.server import StreamableHTTPApp
from mcpbind.versions import HANDSHAKE_VERSIONS
from tests.harness import connected
from tests.http_harness import serve_asgi

pytestmark = pytest.mark.anyio
methods = types.methods

TOOLS = {
    "test_simple_text",
    "test_image_content",
    "test_audio_content",
    "test_embedded_resource",
    "test_multiple_content_types",
    "test_error_handling",
    "test_tool_with_logging",
    "test_tool_with_progress",
    "test_sampling",
    "test_elicitation",
    "test_elicitation_sep1034_defaults",
    "test_elicitation_sep1330_enums",
    JSON_SCHEMA_2020_12_TOOL,
    "test_reconnection",
    "test_add_tool",
    "test_update_resource",
}
PROMPTS = {
    "test_simple_prompt",
    "test_prompt_with_arguments",
    "test_prompt_with_embedded_resource",
    "test_prompt_with_image",
}


def _wire(value: Any) -> Any:
    """A struct as the peer sees it on the wire (camelCase keys, unset fields absent)."""
    return json.loads(msgspec.json.encode(value))


def _texts(result: types.CallToolResult) -> list[str]:
    return [block.text for block in result.content if isinstance(block, types.TextContent)]


async def _sampling(
    params: types.CreateMessageRequestParams, ctx: RequestContext
) -> types.CreateMessageResult:
    return types.CreateMessageResult(
        role="assistant",
        content=types.TextContent(text=f"echo of {len(params.messages)} message(s)"),
        model="test-model",
        stop_reason="endTurn",
    )


# -- lifecycle and listings -------------------------------------------------------------------


async def test_initialize_declares_every_capability_the_scenarios_use() -> None:
    async with connected(build_server()) as session:
        caps = session.server_capabilities
        assert session.protocol_version == "2025-11-25"
        assert not isinstance(caps.tools, types.UnsetType)
        assert not isinstance(caps.prompts, types.UnsetType)
        assert not isinstance(caps.resources, types.UnsetType) and caps.resources.subscribe is True
        assert caps.logging == {} and caps.completions == {}
        await session.ping()  # ping: answered with {}


async def test_tools_list_has_every_fixture_with_name_description_and_schema() -> None:
    async with connected(build_server()) as session:
        tools = await session.all_tools()
    assert {tool.name for tool in tools} == TOOLS
    for tool in tools:
        assert isinstance(tool.description, str) and tool.description, tool.name
        assert tool.input_schema.get("type") == "object", tool.name
        assert isinstance(tool.output_schema, types.UnsetType), tool.name  # content, never structured


async def test_json_schema_2020_12_keywords_are_listed_intact() -> None:
    async with connected(build_server()) as session:
        tools = {tool.name: tool for tool in await session.all_tools()}
    listed = _wire(tools[JSON_SCHEMA_2020_12_TOOL])
    assert listed["inputSchema"] == JSON_SCHEMA_2020_12
    assert listed["inputSchema"]["$schema"] == "https://json-schema.org/draft/2020-12/schema"
    assert listed["inputSchema"]["additionalProperties"] is False
    assert "address" in listed["inputSchema"]["$defs"]
    assert listed["description"] == "Tool with JSON Schema 2020-12 features"


async def test_json_schema_2020_12_tool_is_also_callable() -> None:
    async with connected(build_server()) as session:
        result = await session.call_tool(
            JSON_SCHEMA_2020_12_TOOL, {"name": "Ada", "address": {"street": "1 Main St", "city": "Paris"}}
        )
        # The schema says "additionalProperties": false, and the tool holds to it.
        refused = await session.call_tool(JSON_SCHEMA_2020_12_TOOL, {"name": "Ada", "age": 36})
    assert result.is_error is not True
    assert "Paris" in _texts(result)[0]
    assert refused.is_error is True and "unknown field `age`" in _texts(refused)[0]


# -- tool content -----------------------------------------------------------------------------


async def test_simple_text() -> None:
    async with connected(build_server()) as session:
        result = await session.call_tool("test_simple_text")
    assert _wire(result) == {
        "content": [{"type": "text", "text": "This is a simple text response for testing."}]
    }


async def test_image_content_is_a_real_png() -> None:
    async with connected(build_server()) as session:
        result = await session.call_tool("test_image_content", {})
    [image] = result.content
    assert isinstance(image, types.ImageContent) and image.mime_type == "image/png"
    assert base64.b64decode(image.data, validate=True).startswith(b"\x89PNG\r\n\x1a\n")


async def test_audio_content_is_a_real_wav() -> None:
    async with connected(build_server()) as session:
        result = await session.call_tool("test_audio_content", {})
    [audio] = result.content
    assert isinstance(audio, types.AudioContent) and audio.mime_type == "audio/wav"
    with wave.open(io.BytesIO(base64.b64decode(audio.data, validate=True))) as sound:
        assert sound.getnframes() > 0


async def test_embedded_resource() -> None:
    async with connected(build_server()) as session:
        result = await session.call_tool("test_embedded_resource", {})
    assert _wire(result)["content"] == [
        {
            "type": "resource",
            "resource": {
                "uri": "test://embedded-resource",
                "mimeType": "text/plain",
                "text": "This is an embedded resource content.",
            },
        }
    ]


async def test_multiple_content_types() -> None:
    async with connected(build_server()) as session:
        result = await session.call_tool("test_multiple_content_types", {})
    content = _wire(result)["content"]
    assert [block["type"] for block in content] == ["text", "image", "resource"]
    assert content[2]["resource"]["uri"] == "test://mixed-content-resource"
    assert content[2]["resource"]["mimeType"] == "application/json"
    assert json.loads(content[2]["resource"]["text"]) == {"test": "data", "value": 123}


async def test_error_handling_is_an_error_result_not_a_protocol_error() -> None:
    async with connected(build_server()) as session:
        result = await session.call_tool("test_error_handling", {})
    assert result.is_error is True
    assert "This tool intentionally returns an error for testing" in _texts(result)[0]


# -- notifications while a tool runs ----------------------------------------------------------


async def test_logging_sends_three_info_messages_and_respects_the_level() -> None:
    received: list[types.LoggingMessageNotificationParams] = []
    three = anyio.Event()

    async def on_log(params: types.LoggingMessageNotificationParams) -> None:
        received.append(params)
        if len(received) == 3:
            three.set()

    async with connected(
        build_server(), Client("tester", "0.1", logging=on_log, versions=HANDSHAKE_VERSIONS)
    ) as session:
        await session.set_logging_level("warning")  # info messages are filtered out...
        await session.call_tool("test_tool_with_logging", {})
        await session.set_logging_level("debug")  # ...and come through again
        result = await session.call_tool("test_tool_with_logging", {})
        with anyio.fail_after(5):
            await three.wait()
    assert result.is_error is not True
    # Messages arrive in order, so had the first call leaked any, they would be among these.
    assert [(m.level, m.data) for m in received] == [
        ("info", "Tool execution started"),
        ("info", "Tool processing data"),
        ("info", "Tool execution completed"),
    ]


async def test_progress_goes_0_50_100_of_100() -> None:
    seen: list[tuple[float, float | None]] = []

    async def on_progress(progress: float, total: float | None, message: str | None) -> None:
        seen.append((progress, total))

    async with connected(build_server()) as session:
        result = await session.call_tool("test_tool_with_progress", {}, progress=on_progress)
        plain = await session.call_tool("test_tool_with_progress", {})  # no token: still answers
    assert seen == [(0, 100), (50, 100), (100, 100)]
    assert result.is_error is not True and plain.is_error is not True


# -- requests to the client -------------------------------------------------------------------


async def test_sampling_asks_the_client_and_returns_its_answer() -> None:
    asked: list[types.CreateMessageRequestParams] = []

    async def sampling(
        params: types.CreateMessageRequestParams, ctx: RequestContext
    ) -> types.CreateMessageResult:
        asked.append(params)
        return await _sampling(params, ctx)

    async with connected(
        build_server(), Client("tester", "0.1", sampling=sampling, versions=HANDSHAKE_VERSIONS)
    ) as session:
        result = await session.call_tool("test_sampling", {"prompt": "Test prompt for sampling"})
    [request] = asked
    assert request.max_tokens == 100
    assert _wire(request.messages) == [
        {"role": "user", "content": {"type": "text", "text": "Test prompt for sampling"}}
    ]
    assert _texts(result) == ["LLM response: echo of 1 message(s)"]


async def test_sampling_without_the_capability_is_an_error_result() -> None:
    async with connected(build_server()) as session:
        result = await session.call_tool("test_sampling", {"prompt": "hi"})
    assert result.is_error is True
    assert "sampling capability" in _texts(result)[0]


def _elicitation_client(answer: dict[str, Any], asked: list[types.ElicitRequestFormParams]) -> Client:
    async def elicitation(params: Any, ctx: RequestContext) -> types.ElicitResult:
        assert isinstance(params, types.ElicitRequestFormParams)
        asked.append(params)
        return types.ElicitResult(action="accept", content=answer)

    return Client("tester", "0.1", elicitation=elicitation, versions=HANDSHAKE_VERSIONS)


async def test_elicitation_asks_for_username_and_email() -> None:
    asked: list[types.ElicitRequestFormParams] = []
    client = _elicitation_client({"username": "testuser", "email": "test@example.com"}, asked)
    async with connected(build_server(), client) as session:
        result = await session.call_tool("test_elicitation", {"message": "Please provide your information"})
    [request] = asked
    assert request.message == "Please provide your information"
    schema = _wire(request.requested_schema)
    assert schema["required"] == ["username", "email"]
    assert schema["properties"]["username"] == {"type": "string", "description": "User's response"}
    assert schema["properties"]["email"]["type"] == "string"
    [text] = _texts(result)
    assert text.startswith("User response: action=accept") and "test@example.com" in text


async def test_elicitation_without_the_capability_is_an_error_result() -> None:
    async with connected(build_server()) as session:
        result = await session.call_tool("test_elicitation", {"message": "hello?"})
    assert result.is_error is True


async def test_elicitation_sep1034_sends_a_default_for_each_primitive_type() -> None:
    asked: list[types.ElicitRequestFormParams] = []
    answer = {"name": "Jane Smith", "age": 25, "score": 88, "status": "inactive", "verified": False}
    async with connected(build_server(), _elicitation_client(answer, asked)) as session:
        result = await session.call_tool("test_elicitation_sep1034_defaults", {})
    properties = _wire(asked[0].requested_schema)["properties"]
    assert {name: (p["type"], p["default"]) for name, p in properties.items()} == {
        "name": ("string", "John Doe"),
        "age": ("integer", 30),
        "score": ("number", 95.5),
        "status": ("string", "active"),
        "verified": ("boolean", True),
    }
    assert properties["status"]["enum"] == ["active", "inactive", "pending"]
    [text] = _texts(result)
    assert text.startswith("Elicitation completed: action=accept") and "Jane Smith" in text


async def test_elicitation_sep1330_sends_all_five_enum_shapes() -> None:
    asked: list[types.ElicitRequestFormParams] = []
    answer = {
        "untitledSingle": "option1",
        "titledSingle": "value1",
        "legacyEnum": "opt1",
        "untitledMulti": ["option1", "option2"],
        "titledMulti": ["value1", "value2"],
    }
    async with connected(build_server(), _elicitation_client(answer, asked)) as session:
        result = await session.call_tool("test_elicitation_sep1330_enums", {})
    p = _wire(asked[0].requested_schema)["properties"]
    assert p["untitledSingle"]["type"] == "string" and p["untitledSingle"]["enum"] == [
        "option1",
        "option2",
        "option3",
    ]
    assert "oneOf" not in p["untitledSingle"] and "enumNames" not in p["untitledSingle"]
    assert p["titledSingle"]["type"] == "string" and "enum" not in p["titledSingle"]
    assert all(
        isinstance(o["const"], str) and isinstance(o["title"], str) for o in p["titledSingle"]["oneOf"]
    )
    assert len(p["legacyEnum"]["enumNames"]) == len(p["legacyEnum"]["enum"]) == 3
    assert p["untitledMulti"]["type"] == "array" and p["untitledMulti"]["items"]["type"] == "string"
    assert "anyOf" not in p["untitledMulti"]["items"]
    assert p["titledMulti"]["type"] == "array" and "enum" not in p["titledMulti"]["items"]
    assert all(
        isinstance(o["const"], str) and isinstance(o["title"], str)
        for o in p["titledMulti"]["items"]["anyOf"]
    )
    [text] = _texts(result)
    assert (
        text.startswith("Elicitation completed: action=accept")
        and '"titledMulti":["value1","value2"]' in text
    )


async def test_reconnection_tool_answers_where_there_is_no_stream_to_close() -> None:
    async with connected(build_server()) as session:
        result = await session.call_tool("test_reconnection", {})
    assert _texts(result) == ["Reconnection test completed successfully (no stream to close)"]


async def test_reconnection_over_http_closes_the_stream_and_the_client_resumes() -> None:
    # The server-sse-polling scenario end to end, with mcpbind on both sides: the tool ends its
    # POST's SSE connection, and the client gets the answer by GET with Last-Event-ID.
    app = StreamableHTTPApp(build_server(), retry_ms=50)
    async with (
        serve_asgi(app) as base_url,
        open_streamable_http(f"{base_url}/mcp", reconnect_delay=5.0) as transport,
        Client("tester", "0.1", versions=HANDSHAKE_VERSIONS).connect(transport) as session,
    ):
        with anyio.fail_after(10):
            result = await session.call_tool("test_reconnection", {})
    assert _texts(result) == ["Reconnection test completed successfully"]


# -- resources --------------------------------------------------------------------------------


async def test_resources_list_and_templates() -> None:
    async with connected(build_server()) as session:
        resources = {r.uri: r for r in await session.all_resources()}
        templates = await session.all_resource_templates()
    assert set(resources) == {"test://static-text", "test://static-binary", "test://watched-resource"}
    for resource in resources.values():
        assert resource.name and isinstance(resource.description, str)
    assert [t.uri_template for t in templates] == ["test://template/{id}/data"]


async def test_read_static_text() -> None:
    async with connected(build_server()) as session:
        result = await session.read_resource("test://static-text")
    assert _wire(result) == {
        "contents": [
            {
                "uri": "test://static-text",
                "mimeType": "text/plain",
                "text": "This is the content of the static text resource.",
            }
        ]
    }


async def test_read_static_binary() -> None:
    async with connected(build_server()) as session:
        result = await session.read_resource("test://static-binary")
    [blob] = result.contents
    assert isinstance(blob, types.BlobResourceContents)
    assert blob.uri == "test://static-binary" and blob.mime_type == "image/png"
    assert base64.b64decode(blob.blob, validate=True).startswith(b"\x89PNG")


async def test_read_through_the_template() -> None:
    async with connected(build_server()) as session:
        result = await session.read_resource("test://template/123/data")
    [contents] = result.contents
    assert isinstance(contents, types.TextResourceContents)
    assert contents.uri == "test://template/123/data" and contents.mime_type == "application/json"
    assert json.loads(contents.text) == {"id": "123", "templateTest": True, "data": "Data for ID: 123"}


async def test_subscribe_and_unsubscribe() -> None:
    updated: list[str] = []
    second = anyio.Event()

    async def on_updated(params: types.ResourceUpdatedNotificationParams, ctx: RequestContext) -> None:
        updated.append(params.uri)
        if len(updated) == 2:
            second.set()

    server = build_server()
    client = Client(
        "tester",
        "0.1",
        notification_handlers={methods.NOTIFICATIONS_RESOURCES_UPDATED.method: on_updated},
        versions=HANDSHAKE_VERSIONS,
    )
    async with connected(server, client) as session:
        await session.subscribe_resource("test://watched-resource")
        await server.resource_updated("test://watched-resource")  # sent: subscribed
        await session.unsubscribe_resource("test://watched-resource")
        await server.resource_updated("test://watched-resource")  # not sent any more
        await session.subscribe_resource("test://static-text")
        await server.resource_updated("test://static-text")
        with anyio.fail_after(5):
            await second.wait()
    # Notifications are handled in the order sent: a second watched-resource update would come before.
    assert updated == ["test://watched-resource", "test://static-text"]


async def test_unknown_resource_is_not_found() -> None:
    async with connected(build_server()) as session:
        with pytest.raises(McpError) as caught:
            await session.read_resource("test://nothing-here")
    assert caught.value.code == -32002


# -- prompts and completion -------------------------------------------------------------------


async def test_prompts_list() -> None:
    async with connected(build_server()) as session:
        prompts = {p.name: p for p in await session.all_prompts()}
    assert set(prompts) == PROMPTS
    for prompt in prompts.values():
        assert isinstance(prompt.description, str) and prompt.description
    arguments = prompts["test_prompt_with_arguments"].arguments
    assert not isinstance(arguments, types.UnsetType)
    assert [(a.name, a.required, a.description) for a in arguments] == [
        ("arg1", True, "First test argument"),
        ("arg2", True, "Second test argument"),
    ]
    assert prompts["test_prompt_with_arguments"].description == "A prompt with two required arguments."


async def test_simple_prompt() -> None:
    async with connected(build_server()) as session:
        result = await session.get_prompt("test_simple_prompt")
    assert _wire(result.messages) == [
        {"role": "user", "content": {"type": "text", "text": "This is a simple prompt for testing."}}
    ]


async def test_prompt_with_arguments_substitutes_them() -> None:
    async with connected(build_server()) as session:
        result = await session.get_prompt("test_prompt_with_arguments", {"arg1": "hello", "arg2": "world"})
        with pytest.raises(McpError) as missing:
            await session.get_prompt("test_prompt_with_arguments", {"arg1": "hello"})
    assert _wire(result.messages) == [
        {
            "role": "user",
            "content": {"type": "text", "text": "Prompt with arguments: arg1='hello', arg2='world'"},
        }
    ]
    assert missing.value.code == -32602


async def test_prompt_with_embedded_resource() -> None:
    async with connected(build_server()) as session:
        result = await session.get_prompt(
            "test_prompt_with_embedded_resource", {"resourceUri": "test://example-resource"}
        )
    assert _wire(result.messages) == [
        {
            "role": "user",
            "content": {
                "type": "resource",
                "resource": {
                    "uri": "test://example-resource",
                    "mimeType": "text/plain",
                    "text": "Embedded resource content for testing.",
                },
            },
        },
        {"role": "user", "content": {"type": "text", "text": "Please process the embedded resource above."}},
    ]


async def test_prompt_with_image() -> None:
    async with connected(build_server()) as session:
        result = await session.get_prompt("test_prompt_with_image")
    first, second = result.messages
    assert isinstance(first.content, types.ImageContent) and first.content.mime_type == "image/png"
    assert base64.b64decode(first.content.data, validate=True).startswith(b"\x89PNG")
    assert _wire(second.content) == {"type": "text", "text": "Please analyze the image above."}


async def test_completion_for_a_prompt_argument_and_a_template_variable() -> None:
    async with connected(build_server()) as session:
        prompt = await session.complete(
            types.PromptReference(name="test_prompt_with_arguments"), "arg1", "test"
        )
        template = await session.complete(
            types.ResourceTemplateReference(uri="test://template/{id}/data"), "id", "12"
        )
        nothing = await session.complete(types.PromptReference(name="test_simple_prompt"), "x", "")
    assert prompt.completion.values == ["test", "testing", "tested"]
    assert template.completion.values == ["123"]
    assert nothing.completion.values == []


# -- the client's scenarios, against stand-ins of the suite's mock servers --------------------


def _adder() -> Server:
    server = Server("add-numbers-server", "1.0.0")

    @server.tool(description="Add two numbers together")
    def add_numbers(a: float, b: float) -> str:
        return f"The sum of {a} and {b} is {a + b}"

    return server


def _defaults_checker(received: list[dict[str, Any]]) -> Server:
    server = Server("elicitation-defaults-test-server", "1.0.0")

    @server.tool(description="Tests that client applies defaults for omitted elicitation fields")
    async def test_client_elicitation_defaults(ctx: RequestContext) -> str:
        schema = requested_schema(ProfileWithDefaults)  # SEP-1034's: an integer and a float default
        result = await ctx.elicit(
            types.ElicitRequestFormParams(message="accept with defaults", requested_schema=schema)
        )
        assert isinstance(result, types.ElicitResult) and result.action == "accept"
        received.append(dict(result.content) if isinstance(result.content, dict) else {})
        return "Elicitation completed"

    return server


PROFILE_DEFAULTS = {"name": "John Doe", "age": 30, "score": 95.5, "status": "active", "verified": True}


def test_defaults_of_fills_in_every_declared_default() -> None:
    filled = defaults_of(requested_schema(ProfileWithDefaults))
    assert filled == PROFILE_DEFAULTS
    assert type(filled["age"]) is int and type(filled["score"]) is float


async def test_accept_with_defaults_declines_url_mode() -> None:
    params = types.ElicitRequestURLParams(
        elicitation_id="e1", message="open this", url="https://example.com/"
    )
    result = await accept_with_defaults(params, None)  # type: ignore[arg-type]
    assert result.action == "decline"


async def _play(scenario: str, server: Server) -> str:
    play, client = SCENARIOS[scenario]
    session: RemoteServer
    async with connected(server, client) as session:
        return await play(session)


async def test_client_tools_call_scenario() -> None:
    assert await _play("tools_call", _adder()) == "The sum of 5.0 and 3.0 is 8.0"


async def test_client_elicitation_defaults_scenario() -> None:
    received: list[dict[str, Any]] = []
    play, _ = SCENARIOS["elicitation-sep1034-client-defaults"]
    # The scenario's client, over a session (the server asks mid-call, as a 2025 server does).
    client = Client(
        "mcpbind-conformance-client", "0.1.0", elicitation=accept_with_defaults, versions=HANDSHAKE_VERSIONS
    )
    async with connected(_defaults_checker(received), client) as session:
        await play(session)
    # Across the wire and back, an integer default is still an int when it reaches the server.
    assert received == [PROFILE_DEFAULTS]
    assert type(received[0]["age"]) is int and type(received[0]["score"]) is float


async def test_client_initialize_scenario() -> None:
    assert (await _play("initialize", _adder())).startswith("initialized with add-numbers-server")


async def test_client_scenario_fails_when_the_tool_is_missing() -> None:
    play, client = SCENARIOS["sse-retry"]
    async with connected(_adder(), client) as session:
        with pytest.raises(ScenarioFailed, match="no tool 'test_reconnection'"):
            await play(session)


def test_client_refuses_unknown_scenarios(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setenv("MCP_CONFORMANCE_SCENARIO", "no-such-scenario")
    assert client_main(["http://127.0.0.1:9/mcp"]) == 2
    assert "'no-such-scenario' is not supported" in capsys.readouterr().err
