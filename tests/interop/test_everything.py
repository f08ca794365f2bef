"""The official MCP Python SDK's client (``mcp.stdio_client`` + ``mcp.ClientSession``) drives
``examples/everything.py`` over stdio and exercises every feature it has: tools (plain,
structured, with progress and logging, image and audio content, invalid arguments), resources,
a resource template and subscriptions, prompts (one with an image), completion,
``logging/setLevel`` and parameter descriptions from docstrings.

The official client runs on anyio, so each test runs on both anyio backends (the
``anyio_backend`` fixture of tests/conftest.py); the example server runs in a child process.
"""

from __future__ import annotations

import base64
import io
import os
import sys
import warnings
import wave
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path

import anyio
import pytest

pytest.importorskip("mcp")  # The official SDK is only installed for the interop tests.

import mcp
import mcp.types

import mcpbind

pytestmark = pytest.mark.anyio

EVERYTHING = Path(__file__).resolve().parents[2] / "examples" / "everything.py"

# Every wait is bounded: the longest a single test may take, spawn and shutdown included.
TEST_TIMEOUT = 30.0

PIXEL = "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR4nGNgYGD4DwABBAEAwS2OUAAAAABJRU5ErkJggg=="


def child_env() -> dict[str, str]:
    """PYTHONPATH for a child to import mcpbind as this process does (empty when installed).

    The official client passes a child only a few safe variables plus ``env``, so this is
    needed even though the child is the same interpreter.
    """
    roots = dict.fromkeys(str(Path(entry).resolve().parent) for entry in mcpbind.__path__)
    inherited = os.environ.get("PYTHONPATH")
    return {"PYTHONPATH": os.pathsep.join([*roots, *([inherited] if inherited else [])])}


class Client:
    """The official client session plus what its logging callback received."""

    def __init__(self) -> None:
        self.logs: list[mcp.types.LoggingMessageNotificationParams] = []
        self.updated: list[str] = []

    async def on_log(self, params: mcp.types.LoggingMessageNotificationParams) -> None:
        self.logs.append(params)

    async def on_message(self, message: mcp.types.ServerNotification | Exception) -> None:
        if isinstance(message, mcp.types.ResourceUpdatedNotification):
            self.updated.append(str(message.params.uri))


@asynccontextmanager
async def connect(tmp_path: Path) -> AsyncIterator[tuple[mcp.ClientSession, Client]]:
    """The official client, connected to examples/everything.py over stdio and initialized."""
    params = mcp.StdioServerParameters(command=sys.executable, args=[str(EVERYTHING)], env=child_env())
    client = Client()
    with (tmp_path / "server.stderr").open("w") as errlog:
        async with (
            mcp.stdio_client(params, errlog=errlog) as (read, write),
            mcp.ClientSession(
                read, write, logging_callback=client.on_log, message_handler=client.on_message
            ) as session,
        ):
            await session.initialize()
            yield session, client


def only_text(result: mcp.types.CallToolResult) -> str:
    assert len(result.content) == 1
    block = result.content[0]
    assert isinstance(block, mcp.types.TextContent)
    return block.text


async def test_initialize_and_ping(tmp_path: Path) -> None:
    with anyio.fail_after(TEST_TIMEOUT):
        async with connect(tmp_path) as (session, _):
            result = session.initialize_result
            assert result is not None
            assert result.protocol_version == "2025-11-25"
            assert result.server_info.name == "mcpbind-everything"
            assert result.server_info.version == "0.1.0"
            assert result.server_info.title == "mcpbind everything demo"
            assert result.instructions == (
                "A demo of every feature: try the tools, read the resources, get the prompts."
            )
            capabilities = result.capabilities
            assert capabilities.tools is not None
            assert capabilities.resources is not None
            assert capabilities.prompts is not None
            assert capabilities.completions is not None
            assert capabilities.logging is not None

            assert isinstance(await session.send_ping(), mcp.types.EmptyResult)


async def test_list_tools(tmp_path: Path) -> None:
    with anyio.fail_after(TEST_TIMEOUT):
        async with connect(tmp_path) as (session, _):
            listing = await session.list_tools()
            assert listing.next_cursor is None
            tools = {tool.name: tool for tool in listing.tools}
            assert list(tools) == ["add", "weather", "countdown", "image", "tone", "write_note"]

            add = tools["add"]
            assert add.description == "Add two integers."
            assert add.input_schema["type"] == "object"
            assert add.input_schema["required"] == ["a"]
            assert add.input_schema["properties"]["a"] == {"type": "integer"}
            assert add.input_schema["properties"]["b"] == {
                "type": "integer",
                "description": "The second addend",
                "default": 0,
            }
            assert add.output_schema == {
                "type": "object",
                "properties": {"result": {"type": "integer"}},
                "required": ["result"],
            }
            assert add.annotations is not None
            assert add.annotations.read_only_hint is True
            assert add.annotations.destructive_hint is None

            weather = tools["weather"]
            assert weather.title == "Weather report"
            assert weather.description == "Made-up weather for a city, as structured output."
            # The description comes from the docstring's Args section, which the description omits.
            assert weather.input_schema == {
                "type": "object",
                "properties": {
                    "city": {"type": "string", "description": "The city's name, in any language."}
                },
                "required": ["city"],
            }
            assert weather.output_schema == {
                "type": "object",
                "properties": {
                    "city": {"type": "string"},
                    "celsius": {"type": "number"},
                    "conditions": {"type": "string"},
                },
                "required": ["city", "celsius", "conditions"],
            }
            assert weather.annotations is None

            countdown = tools["countdown"]
            assert countdown.description == "Count down, reporting progress and logging each step."
            # The RequestContext parameter is not part of the tool's arguments.
            assert countdown.input_schema == {
                "type": "object",
                "properties": {"start": {"type": "integer"}},
                "required": ["start"],
            }
            assert countdown.output_schema is None

            image = tools["image"]
            assert image.description == "A one-pixel PNG."
            assert image.input_schema["properties"] == {}
            assert image.output_schema is None

            # NumPy and Sphinx docstrings describe parameters too.
            tone = tools["tone"]
            assert tone.description == "A sine tone as a WAV file, with a caption."
            assert tone.input_schema["properties"] == {
                "hertz": {"type": "integer", "description": "The pitch.", "default": 440},
                "milliseconds": {
                    "type": "integer",
                    "description": "The length, at most one second.",
                    "default": 100,
                },
            }
            assert tone.output_schema is None
            write_note = tools["write_note"]
            assert write_note.description == (
                "Write a note; clients subscribed to it (or to the index) are told."
            )
            assert write_note.input_schema["properties"] == {
                "name": {"type": "string", "description": "The note's name."},
                "text": {"type": "string", "description": "What it says."},
            }


async def test_call_structured_tools(tmp_path: Path) -> None:
    with anyio.fail_after(TEST_TIMEOUT):
        async with connect(tmp_path) as (session, _):
            # The official client validates structuredContent against the listed outputSchema.
            result = await session.call_tool("add", {"a": 40, "b": 2})
            assert result.is_error is False
            assert result.structured_content == {"result": 42}
            # The structured result is also serialized as text, for older clients.
            assert only_text(result) == '{"result":42}'

            # b defaults to 0.
            result = await session.call_tool("add", {"a": 7})
            assert result.structured_content == {"result": 7}

            result = await session.call_tool("weather", {"city": "Oslo"})
            assert result.is_error is False
            assert result.structured_content == {"city": "Oslo", "celsius": 21.5, "conditions": "sunny"}
            assert only_text(result) == '{"city":"Oslo","celsius":21.5,"conditions":"sunny"}'


async def test_call_image(tmp_path: Path) -> None:
    with anyio.fail_after(TEST_TIMEOUT):
        async with connect(tmp_path) as (session, _):
            result = await session.call_tool("image", {})
            assert result.is_error is False
            assert result.structured_content is None
            assert len(result.content) == 1
            block = result.content[0]
            assert isinstance(block, mcp.types.ImageContent)
            assert block.mime_type == "image/png"
            assert block.data == PIXEL


async def test_call_audio(tmp_path: Path) -> None:
    with anyio.fail_after(TEST_TIMEOUT):
        async with connect(tmp_path) as (session, _):
            result = await session.call_tool("tone", {"hertz": 220, "milliseconds": 50})
            assert result.is_error is False
            assert result.structured_content is None
            caption, sound = result.content
            assert isinstance(caption, mcp.types.TextContent) and caption.text == "220 Hz for 50 ms"
            assert isinstance(sound, mcp.types.AudioContent)
            assert sound.mime_type == "audio/wav"
            with wave.open(io.BytesIO(base64.b64decode(sound.data))) as wav:
                assert (wav.getframerate(), wav.getnframes()) == (8000, 400)


async def test_subscriptions(tmp_path: Path) -> None:
    with anyio.fail_after(TEST_TIMEOUT):
        async with connect(tmp_path) as (session, client):
            capabilities = session.initialize_result
            assert capabilities is not None and capabilities.capabilities.resources is not None
            assert capabilities.capabilities.resources.subscribe is True
            with warnings.catch_warnings():
                # resources/subscribe is deprecated in a later protocol version, not in 2025-11-25.
                warnings.simplefilter("ignore", mcp.MCPDeprecationWarning)
                await session.subscribe_resource("notes://index")
                await session.subscribe_resource("notes://speed")
            await session.call_tool("write_note", {"name": "speed", "text": "Even faster now."})
            await session.call_tool("write_note", {"name": "fresh", "text": "A new note."})
            await session.send_ping()
            # Only the subscribed URIs: the index (a new note) and the speed note.
            assert client.updated == ["notes://speed", "notes://index"]
            read = await session.read_resource("notes://speed")
            contents = read.contents[0]
            assert isinstance(contents, mcp.types.TextResourceContents)
            assert contents.text == "Even faster now."

            with warnings.catch_warnings():
                warnings.simplefilter("ignore", mcp.MCPDeprecationWarning)
                await session.unsubscribe_resource("notes://speed")
            await session.call_tool("write_note", {"name": "speed", "text": "Back to normal."})
            await session.send_ping()
            assert client.updated == ["notes://speed", "notes://index"]


async def test_invalid_arguments_are_a_tool_error(tmp_path: Path) -> None:
    """Under 2025-11-25 invalid tool arguments are a tool execution error (isError), not a
    protocol error, so a model can see and correct them."""
    with anyio.fail_after(TEST_TIMEOUT):
        async with connect(tmp_path) as (session, _):
            assert session.protocol_version == "2025-11-25"
            result = await session.call_tool("add", {"a": "forty", "b": 2})
            assert result.is_error is True
            assert result.structured_content is None
            text = only_text(result)
            assert text.startswith("Invalid arguments for tool add:")
            assert "arguments.a" in text

            # The server goes on.
            result = await session.call_tool("add", {"a": 1, "b": 2})
            assert result.structured_content == {"result": 3}


async def test_countdown_progress_and_logging(tmp_path: Path) -> None:
    with anyio.fail_after(TEST_TIMEOUT):
        async with connect(tmp_path) as (session, client):
            seen: list[tuple[float, float | None, str | None]] = []

            async def on_progress(progress: float, total: float | None, message: str | None) -> None:
                seen.append((progress, total, message))

            result = await session.call_tool("countdown", {"start": 3}, progress_callback=on_progress)
            assert result.is_error is False
            assert only_text(result) == "liftoff"
            assert seen == [(1, 3, "3..."), (2, 3, "2..."), (3, 3, "1...")]

            # A round trip after the call: every notification sent before it has been handled.
            await session.send_ping()
            assert [(log.level, log.logger, log.data) for log in client.logs] == [
                ("info", "everything", {"countdown": 3}),
                ("info", "everything", {"countdown": 2}),
                ("info", "everything", {"countdown": 1}),
            ]


async def test_set_level_warning_drops_info_logs(tmp_path: Path) -> None:
    with anyio.fail_after(TEST_TIMEOUT):
        async with connect(tmp_path) as (session, client):
            await session.call_tool("countdown", {"start": 2})
            await session.send_ping()
            assert [log.data for log in client.logs] == [{"countdown": 2}, {"countdown": 1}]

            with warnings.catch_warnings():
                # logging/setLevel is deprecated in a later protocol version, not in 2025-11-25.
                warnings.simplefilter("ignore", mcp.MCPDeprecationWarning)
                assert isinstance(await session.set_logging_level("warning"), mcp.types.EmptyResult)

            client.logs.clear()
            seen: list[float] = []

            async def on_progress(progress: float, total: float | None, message: str | None) -> None:
                seen.append(progress)

            result = await session.call_tool("countdown", {"start": 3}, progress_callback=on_progress)
            assert only_text(result) == "liftoff"
            await session.send_ping()
            # Progress still arrives (it is not logging), but info logs are below warning.
            assert seen == [1, 2, 3]
            assert client.logs == []

            # Back down to debug: the info logs come again.
            with warnings.catch_warnings():
                warnings.simplefilter("ignore", mcp.MCPDeprecationWarning)
                await session.set_logging_level("debug")
            await session.call_tool("countdown", {"start": 1})
            await session.send_ping()
            assert [(log.level, log.data) for log in client.logs] == [("info", {"countdown": 1})]


async def test_resources(tmp_path: Path) -> None:
    with anyio.fail_after(TEST_TIMEOUT):
        async with connect(tmp_path) as (session, _):
            listing = await session.list_resources()
            assert listing.next_cursor is None
            assert len(listing.resources) == 1
            resource = listing.resources[0]
            assert resource.uri == "notes://index"
            assert resource.name == "index"
            assert resource.description == "The names of all notes."
            assert resource.mime_type == "application/json"

            templates = await session.list_resource_templates()
            assert templates.next_cursor is None
            assert len(templates.resource_templates) == 1
            template = templates.resource_templates[0]
            assert template.uri_template == "notes://{name}"
            assert template.name == "note"
            assert template.description == "One note, by name"

            read = await session.read_resource("notes://index")
            assert len(read.contents) == 1
            contents = read.contents[0]
            assert isinstance(contents, mcp.types.TextResourceContents)
            assert contents.uri == "notes://index"
            assert contents.mime_type == "application/json"
            assert contents.text == '["speed","welcome"]'

            # A URI matching the template is read through it.
            read = await session.read_resource("notes://speed")
            assert len(read.contents) == 1
            contents = read.contents[0]
            assert isinstance(contents, mcp.types.TextResourceContents)
            assert contents.uri == "notes://speed"
            assert contents.mime_type == "text/plain"
            assert contents.text == "msgspec structs all the way down."

            read = await session.read_resource("notes://nothing")
            contents = read.contents[0]
            assert isinstance(contents, mcp.types.TextResourceContents)
            assert contents.text == "(no note named nothing)"


async def test_prompts(tmp_path: Path) -> None:
    with anyio.fail_after(TEST_TIMEOUT):
        async with connect(tmp_path) as (session, _):
            listing = await session.list_prompts()
            assert listing.next_cursor is None
            assert [prompt.name for prompt in listing.prompts] == ["summarize", "describe_pixel"]
            prompt = listing.prompts[0]
            assert prompt.name == "summarize"
            assert prompt.title == "Summarize a note"
            assert prompt.description == "Ask for a summary of one note."
            assert prompt.arguments is not None
            assert [
                (argument.name, argument.required, argument.description) for argument in prompt.arguments
            ] == [
                ("name", True, "The note's name."),
                ("style", False, "How to summarize: short, detailed or bullet points."),
            ]

            result = await session.get_prompt("summarize", {"name": "speed", "style": "bullet points"})
            assert result.description == "Ask for a summary of one note."
            assert len(result.messages) == 1
            message = result.messages[0]
            assert message.role == "user"
            assert isinstance(message.content, mcp.types.TextContent)
            assert message.content.text == (
                "Give a bullet points summary of this note: msgspec structs all the way down."
            )

            # style is optional and defaults to "short".
            result = await session.get_prompt("summarize", {"name": "welcome"})
            content = result.messages[0].content
            assert isinstance(content, mcp.types.TextContent)
            assert content.text == "Give a short summary of this note: Welcome to mcpbind."

            result = await session.get_prompt("describe_pixel")
            assert [message.role for message in result.messages] == ["user", "user", "assistant"]
            picture = result.messages[1].content
            assert isinstance(picture, mcp.types.ImageContent)
            assert (picture.mime_type, picture.data) == ("image/png", PIXEL)


async def test_completion(tmp_path: Path) -> None:
    with anyio.fail_after(TEST_TIMEOUT):
        async with connect(tmp_path) as (session, _):
            prompt = mcp.types.PromptReference(type="ref/prompt", name="summarize")
            result = await session.complete(prompt, {"name": "style", "value": "b"})
            assert result.completion.values == ["bullet points"]

            result = await session.complete(prompt, {"name": "style", "value": ""})
            assert result.completion.values == ["short", "detailed", "bullet points"]

            result = await session.complete(prompt, {"name": "name", "value": "w"})
            assert result.completion.values == ["welcome"]

            template = mcp.types.ResourceTemplateReference(type="ref/resource", uri="notes://{name}")
            result = await session.complete(template, {"name": "name", "value": "s"})
            assert result.completion.values == ["speed"]

            result = await session.complete(prompt, {"name": "style", "value": "zzz"})
            assert result.completion.values == []
