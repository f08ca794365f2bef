"""Form elicitation from a flat struct, both ends: schema out, validated answer back."""

from __future__ import annotations

from typing import Annotated, Any, Literal

import msgspec
import pytest

from mcpbind.client.client import Client
from mcpbind.protocol.errors import INVALID_PARAMS, McpError
from mcpbind.runtime.session import RequestContext
from mcpbind.schema import v2025_11_25 as types
from mcpbind.server.elicitation import elicit_form, requested_schema
from mcpbind.server.server import Server
from mcpbind.versions import HANDSHAKE_VERSIONS
from tests.harness import connected


class Contact(msgspec.Struct):
    name: Annotated[str, msgspec.Meta(description="Your name", min_length=1)]
    age: int
    plan: Literal["free", "pro"] = "free"
    newsletter: bool = False


class Nested(msgspec.Struct):
    contact: Contact


def test_the_requested_schema_is_flat_and_typed() -> None:
    schema = requested_schema(Contact)
    assert schema.required == ["name", "age"]
    encoded = msgspec.json.decode(msgspec.json.encode(schema))
    assert encoded["type"] == "object"
    assert encoded["properties"]["name"] == {"type": "string", "description": "Your name", "minLength": 1}
    assert encoded["properties"]["age"] == {"type": "integer"}
    assert encoded["properties"]["plan"]["enum"] == ["free", "pro"]
    assert encoded["properties"]["newsletter"]["type"] == "boolean"
    with pytest.raises(TypeError, match="flat primitive"):
        requested_schema(Nested)


@pytest.mark.anyio
@pytest.mark.parametrize(
    ("answer", "expected"),
    [
        (
            {"action": "accept", "content": {"name": "Ada", "age": 36, "plan": "pro"}},
            "accept Ada 36 pro False",
        ),
        ({"action": "decline"}, "decline"),
        ({"action": "cancel"}, "cancel"),
        ({"action": "accept", "content": {"name": "Ada", "age": "old"}}, "error `content.age`"),
    ],
)
async def test_elicit_a_form(answer: dict[str, Any], expected: str) -> None:
    server = Server("asks", "1")
    asked: list[types.ElicitRequestFormParams] = []

    @server.tool()
    async def signup(ctx: RequestContext) -> str:
        try:
            outcome = await elicit_form(ctx, "Who are you?", Contact)
        except McpError as exc:
            assert exc.code == INVALID_PARAMS
            return "error " + exc.message.split(" - at ")[-1]
        if outcome.value is None:
            return outcome.action
        c = outcome.value
        return f"{outcome.action} {c.name} {c.age} {c.plan} {c.newsletter}"

    async def elicit(params: Any, ctx: RequestContext) -> types.ElicitResult:
        assert isinstance(params, types.ElicitRequestFormParams)
        asked.append(params)
        return msgspec.convert(answer, types.ElicitResult)

    async with connected(server, Client("c", "1", elicitation=elicit, versions=HANDSHAKE_VERSIONS)) as client:
        result = await client.call_tool("signup")
    assert result.content == [types.TextContent(text=expected)]
    assert asked[0].message == "Who are you?" and asked[0].requested_schema.required == ["name", "age"]


@pytest.mark.parametrize("version", ["2025-06-18", "2025-11-25", "2026-07-28"])
def test_a_form_answer_may_hold_any_number(version: str) -> None:
    """A NumberSchema field may be answered with 95.5 (the schema's erratum); integers stay ints."""
    from mcpbind.protocol.unions import decode
    from mcpbind.schema import load

    structs = load(version).structs
    data = b'{"action":"accept","content":{"score":95.5,"count":88,"name":"x","ok":true}}'
    result = decode(data, structs.ElicitResult)
    assert result.content == {"score": 95.5, "count": 88, "name": "x", "ok": True}
    assert isinstance(result.content["count"], int)
    assert msgspec.json.decode(msgspec.json.encode(result)) == msgspec.json.decode(data)


def test_integer_defaults_stay_integers_in_the_requested_schema() -> None:
    class Form(msgspec.Struct):
        age: int = 30
        ratio: float = 0.5

    encoded = msgspec.json.encode(requested_schema(Form))
    properties = msgspec.json.decode(encoded)["properties"]
    assert b'"default":30,' in encoded or b'"default":30}' in encoded
    assert properties["age"]["default"] == 30 and properties["ratio"]["default"] == 0.5
