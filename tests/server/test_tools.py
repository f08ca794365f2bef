"""Tools from functions: schemas, validation by version, conversion of what they return."""

from __future__ import annotations

import logging
import threading
from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager
from typing import Annotated, Any, Literal

import msgspec
import pytest

from mcpbind.client.client import Client
from mcpbind.client.remote import RemoteServer
from mcpbind.protocol.errors import INTERNAL_ERROR, INVALID_PARAMS, RESOURCE_NOT_FOUND, McpError, ToolError
from mcpbind.runtime.session import RequestContext, ServerContext
from mcpbind.schema import v2025_11_25 as types
from mcpbind.server.media import Audio, Image
from mcpbind.server.server import Server
from mcpbind.server.tools import FunctionTool
from tests.harness import connected

pytestmark = pytest.mark.anyio


class Point(msgspec.Struct):
    x: float
    y: float


server = Server("tools", "1")
threads: list[str] = []


@server.tool()
def add(a: int, b: Annotated[int, msgspec.Meta(description="The second addend", ge=0)] = 1) -> int:
    """Add two numbers."""
    threads.append(threading.current_thread().name)
    return a + b


@server.tool(title="Midpoint")
async def midpoint(p: Point, q: Point) -> Point:
    return Point((p.x + q.x) / 2, (p.y + q.y) / 2)


@server.tool()
async def greet(name: str, ctx: RequestContext) -> str:
    await ctx.report_progress(1, 1)
    return f"hello {name} ({ctx.method})"


@server.tool()
def blocks() -> list[str | types.ImageContent]:
    return ["plain", types.ImageContent(data="AA==", mime_type="image/png")]


@server.tool()
def explode() -> str:
    raise RuntimeError("the tool broke")


@asynccontextmanager
async def session(version: str = "2025-11-25") -> AsyncIterator[RemoteServer]:
    async with connected(server, Client("c", "1", protocol_version=version)) as client_session:
        yield client_session


def test_decorated_functions_stay_callable() -> None:
    assert add(2, 3) == 5
    assert add(2) == 3


async def test_schemas_from_type_hints() -> None:
    async with session() as client:
        tools = {tool.name: tool for tool in await client.all_tools()}
    assert set(tools) == {"add", "midpoint", "greet", "blocks", "explode"}
    assert tools["add"].description == "Add two numbers."
    assert tools["add"].input_schema == {
        "type": "object",
        "properties": {
            "a": {"type": "integer"},
            "b": {"type": "integer", "description": "The second addend", "minimum": 0, "default": 1},
        },
        "required": ["a"],
    }
    assert tools["add"].output_schema == {
        "type": "object",
        "properties": {"result": {"type": "integer"}},
        "required": ["result"],
    }
    midpoint_schema = tools["midpoint"].input_schema
    assert midpoint_schema["required"] == ["p", "q"]
    assert midpoint_schema["$defs"]["Point"]["properties"] == {
        "x": {"type": "number"},
        "y": {"type": "number"},
    }
    assert tools["midpoint"].title == "Midpoint"
    assert tools["midpoint"].output_schema == {
        "type": "object",
        "properties": {"x": {"type": "number"}, "y": {"type": "number"}},
        "required": ["x", "y"],
    }
    assert "ctx" not in tools["greet"].input_schema["properties"]
    assert tools["greet"].output_schema is types.UNSET
    assert tools["blocks"].output_schema is types.UNSET  # content blocks are not structured output


async def test_calls_and_conversions() -> None:
    async with session() as client:
        added = await client.call_tool("add", {"a": 2, "b": 40})
        assert added.structured_content == {"result": 42}
        assert added.content == [types.TextContent(text='{"result":42}')]
        assert threads and threads[-1] != threading.main_thread().name  # sync tools run in a worker thread
        mid = await client.call_tool("midpoint", {"p": {"x": 0, "y": 0}, "q": {"x": 2, "y": 4}})
        assert mid.structured_content == {"x": 1.0, "y": 2.0}
        greeted = await client.call_tool("greet", {"name": "ada"})
        assert greeted.content == [types.TextContent(text="hello ada (tools/call)")]
        assert greeted.structured_content is types.UNSET
        mixed = await client.call_tool("blocks")
        assert mixed.content == [
            types.TextContent(text="plain"),
            types.ImageContent(data="AA==", mime_type="image/png"),
        ]
        broken = await client.call_tool("explode")
        assert broken.is_error is True and broken.content == [
            types.TextContent(text="Error in tool explode: internal error")
        ]


async def test_bad_arguments_are_a_tool_error_from_2025_11_25() -> None:
    async with session("2025-11-25") as client:
        result = await client.call_tool("add", {"a": "2"})
        assert result.is_error is True and result.structured_content is types.UNSET
        assert result.content == [
            types.TextContent(
                text="Invalid arguments for tool add: Expected `int`, got `str` - at `arguments.a`"
            )
        ]
        missing = await client.call_tool("add", {})
        assert missing.is_error is True and "`a`" in missing.content[0].text  # type: ignore[union-attr]
        no_arguments = await client.call_tool("add")
        assert no_arguments.is_error is True
        below = await client.call_tool("add", {"a": 1, "b": -1})
        assert below.is_error is True and ">= 0" in below.content[0].text  # type: ignore[union-attr]
        nested = await client.call_tool("midpoint", {"p": {"x": 0, "y": "0"}, "q": {"x": 1, "y": 1}})
        assert nested.is_error is True and "`arguments.p.y`" in nested.content[0].text  # type: ignore[union-attr]
        # An unknown tool is still a protocol error.
        with pytest.raises(McpError) as unknown:
            await client.call_tool("nope")
        assert unknown.value.code == INVALID_PARAMS and unknown.value.message == "Unknown tool: nope"
        assert (await client.call_tool("add", {"a": 1})).structured_content == {"result": 2}


@pytest.mark.parametrize("version", ["2025-06-18", "2025-03-26", "2024-11-05"])
async def test_bad_arguments_are_a_protocol_error_up_to_2025_06_18(version: str) -> None:
    async with session(version) as client:
        assert client.protocol_version == version
        with pytest.raises(McpError) as info:
            await client.call_tool("add", {"a": "2"})
        assert info.value.code == INVALID_PARAMS
        assert (
            info.value.message
            == "Invalid arguments for tool add: Expected `int`, got `str` - at `arguments.a`"
        )
        with pytest.raises(McpError) as missing:
            await client.call_tool("add", {})
        assert missing.value.code == INVALID_PARAMS and "`a`" in missing.value.message
        with pytest.raises(McpError) as unknown:
            await client.call_tool("nope")
        assert unknown.value.code == INVALID_PARAMS and unknown.value.message == "Unknown tool: nope"
        # A tool that fails while running is a tool error in every version.
        broken = await client.call_tool("explode")
        assert broken.is_error is True
        # The server goes on (structured output is only sent from 2025-06-18 on; the text always).
        assert (await client.call_tool("add", {"a": 1})).content == [types.TextContent(text='{"result":2}')]


def returns_point_or_none() -> Point | None:
    return None


def returns_text_or_none() -> str | None:
    return None


def returns_media_tuple() -> tuple[Image | Audio, ...]:
    return ()


def returns_annotated_image() -> Annotated[Image, "a chart"]:
    return Image(b"GIF89a")


def returns_points() -> list[Point]:
    return []


def returns_mixed_union() -> Point | Image:
    return Point(0, 0)  # sent as JSON text, with no schema promised


def returns_points_or_text() -> list[Point] | str:
    return "none"


@pytest.mark.parametrize(
    ("fn", "structured"),
    [
        (returns_point_or_none, True),
        (returns_text_or_none, False),
        (returns_media_tuple, False),
        (returns_annotated_image, False),
        (returns_points, True),
        (returns_mixed_union, False),
        (returns_points_or_text, False),
    ],
)
def test_which_return_annotations_promise_structured_output(fn: Callable[[], Any], structured: bool) -> None:
    tool = FunctionTool(fn, fn.__name__)
    assert (tool.output_schema is not None) is structured


async def test_a_parameter_typed_server_context_receives_the_context() -> None:
    async def where(name: str, ctx: ServerContext) -> str:
        return f"{name} via {ctx.method}"

    tool = FunctionTool(where, "where")
    assert tool.definition().input_schema["properties"].keys() == {"name"}
    own = Server("typed", "1")
    own.tool()(where)
    async with connected(own) as client:
        result = await client.call_tool("where", {"name": "x"})
    assert result.content == [types.TextContent(text="x via tools/call")]


def test_parameter_descriptions_from_docstrings() -> None:
    def google(city: str, days: Annotated[int, msgspec.Meta(description="From Meta", ge=1)] = 1) -> str:
        """Forecast the weather.

        Args:
            city: The city's name.
            days: From the docstring, which Meta overrides.

        Returns:
            The forecast.
        """
        return city

    def numpy(point: Point, scale: Annotated[float, msgspec.Meta(gt=0)]) -> Point:
        """Scale a point.

        Parameters
        ----------
        point : Point
            The point to scale.
        scale : float
            The factor.
        """
        return point

    def sphinx(text: str, ctx: RequestContext) -> str:
        """Echo text.

        :param text: What to echo.
        :param ctx: The request context, which is no argument.
        """
        return text

    forecast = FunctionTool(google, "forecast")
    assert forecast.description == "Forecast the weather.\n\nReturns:\n    The forecast."
    assert forecast.input_schema["properties"] == {
        "city": {"type": "string", "description": "The city's name."},
        "days": {"type": "integer", "description": "From Meta", "minimum": 1, "default": 1},
    }
    scaled = FunctionTool(numpy, "scale")
    assert scaled.description == "Scale a point."
    assert scaled.input_schema["properties"] == {
        "point": {"$ref": "#/$defs/Point", "description": "The point to scale."},
        "scale": {"type": "number", "exclusiveMinimum": 0, "description": "The factor."},
    }
    echoed = FunctionTool(sphinx, "echo")
    assert echoed.description == "Echo text."
    assert echoed.input_schema["properties"] == {"text": {"type": "string", "description": "What to echo."}}
    # An explicit description replaces the docstring's; parameter descriptions stay.
    explicit = FunctionTool(google, "forecast", description="Weather.")
    assert explicit.description == "Weather."
    assert explicit.input_schema["properties"]["city"]["description"] == "The city's name."


# -- schemas given verbatim ------------------------------------------------------------------------


class Address(msgspec.Struct):
    street: str
    city: str | None = None


SCHEMA_2020_12: dict[str, Any] = {
    "$schema": "https://json-schema.org/draft/2020-12/schema",
    "type": "object",
    "$defs": {
        "address": {
            "type": "object",
            "properties": {"street": {"type": "string"}, "city": {"type": "string"}},
            "required": ["street"],
        }
    },
    "properties": {"name": {"type": "string"}, "address": {"$ref": "#/$defs/address"}},
    "required": ["name"],
    "additionalProperties": False,
}


def verbatim_server() -> Server:
    verbatim = Server("verbatim", "1")
    given = {**SCHEMA_2020_12}

    @verbatim.tool(input_schema=given)
    def deliver(name: str, address: Address | None = None) -> str:
        return f"{name} at {address.street if address else 'nowhere'}"

    given["properties"] = {}  # the caller's dict changing later changes nothing

    @verbatim.tool(
        input_schema={"type": "object", "properties": {"name": {"type": "string"}}, "required": ["name"]}
    )
    def lenient(name: str) -> str:
        return name

    @verbatim.tool(
        output_schema={
            "type": "object",
            "properties": {"total": {"type": "integer", "description": "The sum"}},
            "required": ["total"],
            "additionalProperties": False,
        }
    )
    def total(values: list[int], broken: bool = False) -> Any:
        return [sum(values)] if broken else {"total": sum(values)}

    @verbatim.tool(output_schema={"type": "object"})
    def raw() -> types.CallToolResult:
        return types.CallToolResult(content=[], structured_content={"made": "by hand"})

    return verbatim


async def test_an_input_schema_given_verbatim_is_listed_as_written() -> None:
    async with connected(verbatim_server()) as client:
        tools = {tool.name: tool for tool in await client.all_tools()}
    assert tools["deliver"].input_schema == SCHEMA_2020_12
    assert tools["deliver"].output_schema is types.UNSET  # the return annotation says text
    assert tools["lenient"].input_schema == {
        "type": "object",
        "properties": {"name": {"type": "string"}},
        "required": ["name"],
    }
    assert tools["total"].input_schema["properties"]["values"] == {
        "type": "array",
        "items": {"type": "integer"},
    }
    assert tools["total"].output_schema == {
        "type": "object",
        "properties": {"total": {"type": "integer", "description": "The sum"}},
        "required": ["total"],
        "additionalProperties": False,
    }


async def test_arguments_for_a_verbatim_schema_are_decoded_into_the_parameters() -> None:
    async with connected(verbatim_server()) as client:
        done = await client.call_tool("deliver", {"name": "ada", "address": {"street": "Main St"}})
        assert done.content == [types.TextContent(text="ada at Main St")]
        wrong = await client.call_tool("deliver", {"name": "ada", "address": {"city": "Paris"}})
        assert wrong.is_error is True
        assert wrong.content == [
            types.TextContent(
                text="Invalid arguments for tool deliver: Object missing required field `street`"
                " - at `arguments.address`"
            )
        ]
        # "additionalProperties": false at the top of the schema is enforced...
        extra = await client.call_tool("deliver", {"name": "ada", "colour": "red"})
        assert extra.is_error is True
        assert extra.content == [
            types.TextContent(
                text="Invalid arguments for tool deliver: Object contains unknown field `colour`"
            )
        ]
        # ...and without it, unknown arguments are ignored as usual.
        assert (await client.call_tool("lenient", {"name": "x", "colour": "red"})).is_error is not True


async def test_an_output_schema_given_verbatim_takes_the_value_as_structured_content() -> None:
    async with connected(verbatim_server()) as client:
        summed = await client.call_tool("total", {"values": [1, 2, 3]})
        assert summed.structured_content == {"total": 6}  # not wrapped in {"result": ...}
        assert summed.content == [types.TextContent(text='{"total":6}')]
        broken = await client.call_tool("total", {"values": [1], "broken": True})
        assert broken.is_error is True and broken.structured_content is types.UNSET
        assert broken.content == [
            types.TextContent(
                text="Tool total returned list, but its output schema describes an object: "
                "return a mapping, struct or dataclass (or a CallToolResult)"
            )
        ]
        raw = await client.call_tool("raw")
        assert raw.structured_content == {"made": "by hand"} and raw.content == []


def takes_name(name: str, count: int = 1) -> str:
    return name * count


@pytest.mark.parametrize(
    ("schema", "error", "message"),
    [
        ({"type": "array"}, ValueError, 'input_schema must be a JSON Schema object with "type": "object"'),
        ({"properties": {}}, ValueError, 'input_schema must be a JSON Schema object with "type": "object"'),
        ({"type": "object", "default": object()}, TypeError, "input_schema is not JSON"),
        (
            {"type": "object", "properties": {"count": {"type": "integer"}}},
            ValueError,
            r"\(parameters without a default missing from its properties: name\)",
        ),
        (
            {"type": "object", "properties": {"name": {"type": "string"}}},
            ValueError,
            r"\(parameters without a default that it does not require: name\)",
        ),
        (
            {"type": "object", "properties": {"name": {}, "size": {}, "colour": {}}, "required": ["name"]},
            ValueError,
            r"\(properties with no parameter to receive them: size, colour\)",
        ),
    ],
)
def test_a_given_input_schema_is_checked_at_registration(
    schema: dict[str, Any], error: type[Exception], message: str
) -> None:
    with pytest.raises(error, match=f"^Tool shout: .*{message}"):
        Server("s", "1").tool("shout", input_schema=schema)(takes_name)


def test_function_tool_takes_schemas_verbatim_too() -> None:
    # Properties hidden behind a reference cannot be compared cheaply: accepted as they are.
    referenced = {"type": "object", "$ref": "#/$defs/args", "$defs": {"args": {"type": "object"}}}
    tool = FunctionTool(takes_name, "shout", input_schema=referenced, output_schema={"type": "object"})
    assert tool.definition().input_schema == referenced
    assert tool.definition().output_schema == {"type": "object"}
    with pytest.raises(
        ValueError, match=r'^Tool shout: output_schema must be a JSON Schema object with "type"'
    ):
        FunctionTool(takes_name, "shout", output_schema={"type": "string"})


# -- annotations naming types local to the function that defines the tool --------------------------


async def test_types_defined_in_the_enclosing_function_are_resolved() -> None:
    # This module has `from __future__ import annotations`: every annotation below is a string.
    local = Server("local", "1")

    class Pair(msgspec.Struct):
        left: int
        right: int

    class Total(msgspec.Struct):
        sum: int

    Colour = Literal["red", "blue"]

    @local.tool()
    def add_pair(pair: Pair) -> Total:
        return Total(pair.left + pair.right)

    @local.prompt()
    def paint(colour: Colour) -> str:
        return f"Paint it {colour}."

    @local.resource("test://totals/{n}")
    def totals(n: str) -> Total:
        return Total(int(n))

    async with connected(local) as client:
        [tool] = await client.all_tools()
        assert tool.input_schema["$defs"]["Pair"]["required"] == ["left", "right"]
        assert tool.output_schema == {
            "type": "object",
            "properties": {"sum": {"type": "integer"}},
            "required": ["sum"],
        }
        added = await client.call_tool("add_pair", {"pair": {"left": 2, "right": 3}})
        assert added.structured_content == {"sum": 5}
        painted = await client.get_prompt("paint", {"colour": "red"})
        assert painted.messages[0].content == types.TextContent(text="Paint it red.")
        with pytest.raises(McpError, match="Invalid enum value 'green'"):  # the local Literal holds
            await client.get_prompt("paint", {"colour": "green"})
        read = await client.read_resource("test://totals/7")
        assert read.contents[0].text == '{"sum":7}'  # type: ignore[union-attr]


def make_tool_function() -> Callable[..., Any]:
    class Hidden(msgspec.Struct):
        x: int

    def reveal(hidden: Hidden) -> int:
        return hidden.x

    return reveal


def test_an_annotation_that_cannot_be_resolved_fails_registration_clearly() -> None:
    # The function that defined the type has returned: its names are gone.
    reveal = make_tool_function()
    with pytest.raises(TypeError) as gone:
        Server("s", "1").tool()(reveal)
    assert str(gone.value) == (
        "Tool reveal: Cannot resolve the annotations of make_tool_function.<locals>.reveal "
        f"({__file__}:{reveal.__code__.co_firstlineno}): 'Hidden' is not defined in its module nor "
        "(at registration) in the function that defines it. The annotations of a tool, prompt or "
        "resource function are evaluated when it is registered: move 'Hidden' to module level "
        "(or import it there)."
    )

    # A module-level function naming something that exists nowhere.
    with pytest.raises(
        TypeError,
        match=r"^Cannot resolve the annotations of misspelt \(.*\): 'Pont' is not defined in its module\. ",
    ):
        Server("s", "1").prompt()(misspelt)

    # A type defined in the same function, but only after the registration.
    with pytest.raises(TypeError, match=r"'Later' is not defined in its module nor \(at registration\)"):

        @Server("s", "1").resource("test://{value}")
        def early(value: str) -> Later:
            return Later()

    class Later(msgspec.Struct):
        pass


def misspelt(point: Pont) -> str:  # type: ignore[name-defined]  # noqa: F821
    return ""


def failing_server(expose_internal_errors: bool) -> Server:
    failing = Server("failing", "1", expose_internal_errors=expose_internal_errors)

    @failing.tool()
    def crash() -> str:
        raise RuntimeError("password=hunter2")

    @failing.tool()
    async def crash_async() -> str:
        raise KeyError("secret key")

    @failing.tool()
    def refuse(city: str) -> str:
        raise ToolError(f"No weather for {city}: the station is down")

    @failing.tool()
    def protocol() -> str:
        raise McpError(INVALID_PARAMS, "Deliberately invalid")

    @failing.resource("secret://{name}")
    def secret(name: str) -> str:
        raise RuntimeError(f"cannot open /etc/{name}")

    @failing.resource("gone://{name}")
    def gone(name: str) -> str:
        raise McpError(RESOURCE_NOT_FOUND, f"No such thing: {name}")

    @failing.prompt()
    def broken(topic: str) -> str:
        raise RuntimeError(f"token for {topic} expired")

    return failing


@pytest.mark.parametrize("expose", [False, True])
async def test_unexpected_failures_are_logged_and_hidden_unless_exposed(
    expose: bool, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.ERROR, logger="mcpbind")
    async with connected(failing_server(expose)) as client:
        crashed = await client.call_tool("crash")
        crashed_async = await client.call_tool("crash_async")
        with pytest.raises(McpError) as resource_error:
            await client.read_resource("secret://shadow")
        with pytest.raises(McpError) as prompt_error:
            await client.get_prompt("broken", {"topic": "mail"})
        # Deliberate failures carry their message whatever the setting.
        refused = await client.call_tool("refuse", {"city": "Paris"})
        with pytest.raises(McpError) as protocol_error:
            await client.call_tool("protocol")
        with pytest.raises(McpError) as not_found:
            await client.read_resource("gone://x")

    assert crashed.is_error is True and crashed_async.is_error is True
    assert resource_error.value.code == prompt_error.value.code == INTERNAL_ERROR
    if expose:
        assert crashed.content == [types.TextContent(text="Error in tool crash: password=hunter2")]
        assert crashed_async.content == [types.TextContent(text="Error in tool crash_async: 'secret key'")]
        assert resource_error.value.message == "Internal error: cannot open /etc/shadow"
        assert prompt_error.value.message == "Internal error: token for mail expired"
    else:
        assert crashed.content == [types.TextContent(text="Error in tool crash: internal error")]
        assert crashed_async.content == [types.TextContent(text="Error in tool crash_async: internal error")]
        assert resource_error.value.message == prompt_error.value.message == "Internal error"
    assert refused.is_error is True
    assert refused.content == [types.TextContent(text="No weather for Paris: the station is down")]
    assert (protocol_error.value.code, protocol_error.value.message) == (
        INVALID_PARAMS,
        "Deliberately invalid",
    )
    assert (not_found.value.code, not_found.value.message) == (RESOURCE_NOT_FOUND, "No such thing: x")

    # Every unexpected failure is in the server's log, with its traceback; deliberate ones are not.
    logged = [r for r in caplog.records if r.name.startswith("mcpbind")]
    assert len(logged) == 4
    texts = [
        r.getMessage() + "\n" + logging.Formatter().formatException(r.exc_info) for r in logged if r.exc_info
    ]
    assert len(texts) == 4
    for secret in ("password=hunter2", "'secret key'", "cannot open /etc/shadow", "token for mail expired"):
        assert sum(secret in text and "Traceback" in text for text in texts) == 1, secret
    assert any(r.name == "mcpbind.tools" and "crash" in r.getMessage() for r in logged)


class Opaque:
    """A class msgspec can neither describe nor decode."""


def test_a_schema_that_cannot_be_derived_names_the_tool_and_the_annotation() -> None:
    server = Server("s", "1")

    def lookup(query: str, where: Opaque) -> str:
        return query

    with pytest.raises(TypeError) as refused:
        server.tool("find_things")(lookup)
    assert str(refused.value) == (
        "Tool find_things: cannot derive its inputSchema from parameter 'where' of"
        " test_a_schema_that_cannot_be_derived_names_the_tool_and_the_annotation.<locals>.lookup:"
        f" type {Opaque!r} is not supported"
    )

    def read(uri: str) -> types.ReadResourceResult:  # contents: TextResourceContents | BlobResourceContents
        raise AssertionError("never called")

    with pytest.raises(TypeError) as refused:
        server.tool("read_it")(read)
    assert str(refused.value) == (
        "Tool read_it: cannot derive its outputSchema from the return annotation of"
        " test_a_schema_that_cannot_be_derived_names_the_tool_and_the_annotation.<locals>.read:"
        " TextResourceContentsOrBlobResourceContents (TextResourceContents | BlobResourceContents)"
        " is an untagged union, for which no JSON Schema is derived; give the schema as is with"
        " output_schema="
    )

    def spread(*items: str) -> str:
        return "".join(items)

    with pytest.raises(TypeError, match=r"^Tool spread_out: SpreadOutArguments: \*args and \*\*kwargs"):
        server.tool("spread_out")(spread)
    assert not server.tools
