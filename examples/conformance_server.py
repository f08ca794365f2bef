"""The fixture server for the official MCP conformance suite's server scenarios.

Each tool, resource and prompt here is one that a scenario of
``@modelcontextprotocol/conformance`` asks for by name (``test_simple_text``,
``test://static-text``, ``test_simple_prompt``...), with the content that scenario checks.

    python examples/conformance_server.py --port 8123        # Streamable HTTP at /mcp
    python examples/conformance_server.py --stdio            # over stdin and stdout
    nox -s conformance                                        # starts it and runs the suite

Two tools change the server, so that change notifications can be tested from outside:
``test_add_tool`` registers one more tool (``test_added_tool_1``, ``_2``...) and
``test_update_resource`` changes ``test://watched-resource``. Clients hear of it as their
version says: 2025 sessions by ``notifications/tools/list_changed`` and (when subscribed with
``resources/subscribe``) ``notifications/resources/updated``, 2026-07-28 clients on the
``subscriptions/listen`` streams that asked for it.

:func:`build_server` makes the :class:`~mcpbind.server.server.Server`, so the fixtures can be exercised in
memory (``tests/test_conformance_examples.py``) as well as over HTTP.
"""

from __future__ import annotations

import argparse
import io
import struct
import wave
import zlib
from typing import Annotated, Any, Literal

import anyio
import msgspec

from mcpbind.protocol.errors import INVALID_PARAMS, McpError, ToolError
from mcpbind.runtime.session import RequestContext
from mcpbind.schema import v2025_11_25 as types
from mcpbind.server.elicitation import elicit_form
from mcpbind.server.media import Audio, Image
from mcpbind.server.server import Server
from mcpbind.transports.http.server import close_sse_stream, serve_http

__all__ = ["ADDED_TOOL_PREFIX", "JSON_SCHEMA_2020_12_TOOL", "WATCHED_URI", "build_server", "main"]

# -- media made here, small and valid --------------------------------------------------------


def _png_one_pixel(red: int, green: int, blue: int) -> bytes:
    """A 1x1 truecolour PNG, assembled chunk by chunk."""

    def chunk(kind: bytes, payload: bytes) -> bytes:
        body = kind + payload
        return struct.pack(">I", len(payload)) + body + struct.pack(">I", zlib.crc32(body))

    header = struct.pack(">IIBBBBB", 1, 1, 8, 2, 0, 0, 0)  # width, height, depth 8, RGB
    scanline = b"\x00" + bytes((red, green, blue))  # filter byte 0, then the pixel
    return (
        b"\x89PNG\r\n\x1a\n"
        + chunk(b"IHDR", header)
        + chunk(b"IDAT", zlib.compress(scanline))
        + chunk(b"IEND", b"")
    )


def _wav_silence(milliseconds: int = 50, rate: int = 8000) -> bytes:
    """A short mono 8-bit WAV file of silence."""
    buffer = io.BytesIO()
    with wave.open(buffer, "wb") as out:
        out.setnchannels(1)
        out.setsampwidth(1)
        out.setframerate(rate)
        out.writeframes(b"\x80" * (rate * milliseconds // 1000))
    return buffer.getvalue()


PNG = _png_one_pixel(255, 0, 0)
WAV = _wav_silence()

# -- fixed texts the scenarios look for -------------------------------------------------------

SIMPLE_TEXT = "This is a simple text response for testing."
ERROR_TEXT = "This tool intentionally returns an error for testing"
EMBEDDED_TEXT = "This is an embedded resource content."
STATIC_TEXT = "This is the content of the static text resource."
SIMPLE_PROMPT_TEXT = "This is a simple prompt for testing."
PROMPT_RESOURCE_TEXT = "Embedded resource content for testing."
WATCHED_URI = "test://watched-resource"
WATCHED_TEXT = "This resource can be subscribed to."
ADDED_TOOL_PREFIX = "test_added_tool_"

JSON_SCHEMA_2020_12_TOOL = "json_schema_2020_12_tool"
# Served as written: the scenario checks that $schema, $defs and additionalProperties survive.
JSON_SCHEMA_2020_12: dict[str, Any] = {
    "$schema": "https://json-schema.org/draft/2020-12/schema",
    "type": "object",
    "$defs": {
        "address": {
            "type": "object",
            "properties": {"street": {"type": "string"}, "city": {"type": "string"}},
        }
    },
    "properties": {"name": {"type": "string"}, "address": {"$ref": "#/$defs/address"}},
    "additionalProperties": False,
}

COMPLETIONS = {
    ("test_prompt_with_arguments", "arg1"): ["test", "testing", "tested", "paris", "park", "party"],
    ("test_prompt_with_arguments", "arg2"): ["alpha", "beta", "gamma"],
    ("test://template/{id}/data", "id"): ["1", "2", "3", "123"],
}


# -- elicitation forms ------------------------------------------------------------------------


class Identity(msgspec.Struct):
    """What ``test_elicitation`` asks the user for."""

    username: Annotated[str, msgspec.Meta(description="User's response")]
    email: Annotated[str, msgspec.Meta(description="User's email address")]


class ProfileWithDefaults(msgspec.Struct):
    """SEP-1034: a default for each primitive type."""

    name: str = "John Doe"
    age: int = 30
    score: float = 95.5
    status: Literal["active", "inactive", "pending"] = "active"
    verified: bool = True


class Address(msgspec.Struct):
    """The nested object of the JSON Schema 2020-12 tool's arguments."""

    street: str | None = None
    city: str | None = None


def _enum_variants_schema() -> types.ElicitRequestFormParamsRequestedSchema:
    """SEP-1330: the five ways an elicitation form can offer choices."""
    return types.ElicitRequestFormParamsRequestedSchema(
        properties={
            "untitledSingle": types.UntitledSingleSelectEnumSchema(
                enum=["option1", "option2", "option3"], description="Pick one option"
            ),
            "titledSingle": types.TitledSingleSelectEnumSchema(
                one_of=[
                    types.TitledSingleSelectEnumSchemaOneOfItem(const="value1", title="First Option"),
                    types.TitledSingleSelectEnumSchemaOneOfItem(const="value2", title="Second Option"),
                    types.TitledSingleSelectEnumSchemaOneOfItem(const="value3", title="Third Option"),
                ],
                description="Pick one titled option",
            ),
            "legacyEnum": types.LegacyTitledEnumSchema(
                enum=["opt1", "opt2", "opt3"],
                enum_names=["Option One", "Option Two", "Option Three"],
                description="Pick one (titled the pre-2025-11-25 way)",
            ),
            "untitledMulti": types.UntitledMultiSelectEnumSchema(
                items=types.UntitledMultiSelectEnumSchemaItems(enum=["option1", "option2", "option3"]),
                description="Pick any options",
            ),
            "titledMulti": types.TitledMultiSelectEnumSchema(
                items=types.TitledMultiSelectEnumSchemaItems(
                    any_of=[
                        types.TitledMultiSelectEnumSchemaItemsAnyOfItem(const="value1", title="First Choice"),
                        types.TitledMultiSelectEnumSchemaItemsAnyOfItem(
                            const="value2", title="Second Choice"
                        ),
                        types.TitledMultiSelectEnumSchemaItemsAnyOfItem(const="value3", title="Third Choice"),
                    ]
                ),
                description="Pick any titled options",
            ),
        },
        required=["untitledSingle", "titledSingle", "legacyEnum", "untitledMulti", "titledMulti"],
    )


def _text_of(content: Any) -> str:
    """The text of a sampling answer (one block or a list of them)."""
    blocks = content if isinstance(content, list) else [content]
    return "".join(block.text for block in blocks if isinstance(block, types.TextContent))


def _json(value: Any) -> str:
    return msgspec.json.encode(value).decode()


# -- the server -------------------------------------------------------------------------------


def build_server() -> Server:
    """A server with every fixture the conformance suite's server scenarios use."""
    server = Server(
        "mcpbind-conformance",
        "0.1.0",
        title="mcpbind conformance fixtures",
        instructions="Fixtures for the MCP conformance suite; nothing useful for a person.",
        logging=True,  # test_tool_with_logging sends log messages
    )

    # tools: content of each kind

    @server.tool()
    def test_simple_text() -> str:
        """Answers with one text block."""
        return SIMPLE_TEXT

    @server.tool()
    def test_image_content() -> Image:
        """Answers with a one-pixel red PNG."""
        return Image(PNG)  # image/png, from the bytes

    @server.tool()
    def test_audio_content() -> Audio:
        """Answers with a short silent WAV."""
        return Audio(WAV)  # audio/wav, from the bytes

    @server.tool()
    def test_embedded_resource() -> types.EmbeddedResource:
        """Answers with a text resource embedded in the result."""
        return types.EmbeddedResource(
            resource=types.TextResourceContents(
                uri="test://embedded-resource", mime_type="text/plain", text=EMBEDDED_TEXT
            )
        )

    @server.tool()
    def test_multiple_content_types() -> list[str | Image | types.EmbeddedResource]:
        """Answers with text, an image and an embedded JSON resource in one result."""
        return [
            "Multiple content types test:",
            Image(PNG),
            types.EmbeddedResource(
                resource=types.TextResourceContents(
                    uri="test://mixed-content-resource",
                    mime_type="application/json",
                    text=_json({"test": "data", "value": 123}),
                )
            ),
        ]

    @server.tool()
    def test_error_handling() -> str:
        """Always fails; the failure comes back as a result with isError."""
        raise ToolError(ERROR_TEXT)

    # tools: notifications while running

    @server.tool()
    async def test_tool_with_logging(ctx: RequestContext) -> str:
        """Sends three info log messages about 50 ms apart."""
        await ctx.log("info", "Tool execution started", logger="conformance")
        await anyio.sleep(0.05)
        await ctx.log("info", "Tool processing data", logger="conformance")
        await anyio.sleep(0.05)
        await ctx.log("info", "Tool execution completed", logger="conformance")
        return "Logging test completed: 3 messages sent"

    @server.tool()
    async def test_tool_with_progress(ctx: RequestContext) -> str:
        """Reports progress 0, 50 and 100 of 100, about 50 ms apart, when asked for progress."""
        await ctx.report_progress(0, 100, "started")
        await anyio.sleep(0.05)
        await ctx.report_progress(50, 100, "half way")
        await anyio.sleep(0.05)
        await ctx.report_progress(100, 100, "done")
        return f"Progress test completed (token {ctx.progress_token!r})"

    # tools: requests to the client

    @server.tool()
    async def test_sampling(prompt: str, ctx: RequestContext) -> str:
        """Asks the client's model to answer the prompt (sampling/createMessage)."""
        if isinstance(ctx.peer_capabilities.sampling, types.UnsetType):
            raise ToolError("test_sampling needs a client with the sampling capability")
        result = await ctx.create_message(
            types.CreateMessageRequestParams(
                messages=[types.SamplingMessage(role="user", content=types.TextContent(text=prompt))],
                max_tokens=100,
            )
        )
        if not isinstance(result, types.CreateMessageResult):
            raise McpError(INVALID_PARAMS, "The client answered sampling with a task, not a message")
        return f"LLM response: {_text_of(result.content)}"

    @server.tool()
    async def test_elicitation(message: str, ctx: RequestContext) -> str:
        """Asks the user for a username and an email address (elicitation/create)."""
        _require_elicitation(ctx)
        outcome = await elicit_form(ctx, message, Identity)
        content = msgspec.to_builtins(outcome.value) if outcome.value is not None else {}
        return f"User response: action={outcome.action}, content={_json(content)}"

    @server.tool()
    async def test_elicitation_sep1034_defaults(ctx: RequestContext) -> str:
        """Asks for a form whose fields all carry defaults (SEP-1034)."""
        _require_elicitation(ctx)
        outcome = await elicit_form(ctx, "Please review your profile", ProfileWithDefaults)
        content = msgspec.to_builtins(outcome.value) if outcome.value is not None else {}
        return f"Elicitation completed: action={outcome.action}, content={_json(content)}"

    @server.tool()
    async def test_elicitation_sep1330_enums(ctx: RequestContext) -> str:
        """Asks for a form with every kind of choice field (SEP-1330)."""
        _require_elicitation(ctx)
        result = await ctx.elicit(
            types.ElicitRequestFormParams(
                message="Please make your choices", requested_schema=_enum_variants_schema()
            )
        )
        if not isinstance(result, types.ElicitResult):
            raise McpError(INVALID_PARAMS, "The client answered the elicitation with a task, not a result")
        content = result.content if isinstance(result.content, dict) else {}
        return f"Elicitation completed: action={result.action}, content={_json(content)}"

    # tools: schema keywords kept as written

    # The schema is advertised as written; the arguments are still decoded into the parameters
    # (and, as it says "additionalProperties": false, unknown ones are refused).
    @server.tool(
        JSON_SCHEMA_2020_12_TOOL,
        description="Tool with JSON Schema 2020-12 features",
        input_schema=JSON_SCHEMA_2020_12,
    )
    def json_schema_tool(name: str | None = None, address: Address | None = None) -> str:
        return f"Received name={name!r}, address={_json(address)}"

    # tools: transport behaviour

    @server.tool()
    async def test_reconnection(ctx: RequestContext) -> str:
        """Closes its own SSE stream mid-call (over Streamable HTTP), then answers; the client
        gets the answer by reconnecting with Last-Event-ID (SEP-1699)."""
        closed = await close_sse_stream(ctx)  # False where there is no such stream (not HTTP)
        await anyio.sleep(0.1)
        return "Reconnection test completed successfully" + ("" if closed else " (no stream to close)")

    # tools: changes to the server, announced to its clients

    changes = {"tools": 0, "resource": 0}

    @server.tool()
    async def test_add_tool() -> str:
        """Registers one more tool (a new one at each call) and announces the tool-list change."""
        changes["tools"] += 1
        number = changes["tools"]
        name = f"{ADDED_TOOL_PREFIX}{number}"

        def added() -> str:
            return f"Tool {name} answers."

        # Registering it tells every client: list_changed to sessions, the listen streams.
        server.tool(name, description=f"Added by test_add_tool (call {number})")(added)
        return f"Added tool {name}"

    @server.tool()
    async def test_update_resource() -> str:
        """Changes the content of test://watched-resource and announces its update to subscribers."""
        changes["resource"] += 1
        await server.resource_updated(WATCHED_URI)
        return f"Updated {WATCHED_URI} (version {changes['resource']})"

    # resources

    @server.resource("test://static-text", mime_type="text/plain", description="A fixed text resource")
    def static_text() -> str:
        return STATIC_TEXT

    @server.resource("test://static-binary", mime_type="image/png", description="A fixed PNG image")
    def static_binary() -> bytes:
        return PNG

    @server.resource(WATCHED_URI, mime_type="text/plain", description="A resource to subscribe to")
    def watched_resource() -> str:
        version = changes["resource"]
        return WATCHED_TEXT if not version else f"{WATCHED_TEXT} (version {version})"

    @server.resource(
        "test://template/{id}/data", mime_type="application/json", description="Data for any id, as JSON"
    )
    def template_data(id: str) -> dict[str, Any]:
        return {"id": id, "templateTest": True, "data": f"Data for ID: {id}"}

    # prompts

    @server.prompt()
    def test_simple_prompt() -> str:
        """A prompt without arguments."""
        return SIMPLE_PROMPT_TEXT

    @server.prompt()
    def test_prompt_with_arguments(arg1: str, arg2: str) -> str:
        """A prompt with two required arguments.

        Args:
            arg1: First test argument
            arg2: Second test argument
        """
        return f"Prompt with arguments: arg1='{arg1}', arg2='{arg2}'"

    @server.prompt()
    def test_prompt_with_embedded_resource(resourceUri: str) -> list[Any]:
        """A prompt that embeds the resource named by its argument."""
        embedded = types.EmbeddedResource(
            resource=types.TextResourceContents(
                uri=resourceUri, mime_type="text/plain", text=PROMPT_RESOURCE_TEXT
            )
        )
        return [embedded, "Please process the embedded resource above."]

    @server.prompt()
    def test_prompt_with_image() -> list[Any]:
        """A prompt holding an image."""
        return [Image(PNG), "Please analyze the image above."]

    # completion

    @server.completion()
    async def complete(
        ref: types.PromptReference | types.ResourceTemplateReference,
        argument: str,
        value: str,
        resolved: dict[str, str],
    ) -> list[str]:
        key = ref.name if isinstance(ref, types.PromptReference) else ref.uri
        return [
            candidate for candidate in COMPLETIONS.get((key, argument), []) if candidate.startswith(value)
        ]

    return server


def _require_elicitation(ctx: RequestContext) -> None:
    if isinstance(ctx.peer_capabilities.elicitation, types.UnsetType):
        raise ToolError("This tool needs a client with the elicitation capability")


# -- running it -------------------------------------------------------------------------------


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--host", default="127.0.0.1")
    parser.add_argument("--port", type=int, default=8000)
    parser.add_argument("--backend", choices=("asyncio", "trio"), default="asyncio")
    parser.add_argument("--stdio", action="store_true", help="serve over stdin and stdout instead of HTTP")
    options = parser.parse_args(argv)
    if options.stdio:
        build_server().run_stdio_sync(options.backend)
        return
    anyio.run(
        lambda: serve_http(build_server(), options.host, options.port, backend=options.backend),
        backend=options.backend,
    )


if __name__ == "__main__":
    main()
