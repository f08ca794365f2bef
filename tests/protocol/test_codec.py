"""The JSON-RPC codec and the decoding policy: what is accepted, what is rejected and how."""

from __future__ import annotations

import json

import msgspec
import pytest

from codegen.pins import load_pins
from mcpbind.protocol.unions import UnknownContent, decode
from mcpbind.protocol.wire import (
    INVALID_PARAMS,
    INVALID_REQUEST,
    METHOD_NOT_FOUND,
    PARSE_ERROR,
    Codec,
    ErrorResponse,
    Notification,
    Request,
    Response,
    TypedNotification,
    TypedRequest,
    WireError,
)
from mcpbind.schema import load
from mcpbind.schema import v2025_06_18 as v0618
from mcpbind.schema import v2025_11_25 as v1125
from mcpbind.schema import v2026_07_28 as v0728
from mcpbind.versions import schema_for
from tests.protocol.codec_calls import count_two_stage_calls

SERVER = Codec.for_version("2025-06-18", "server")
CLIENT = Codec.for_version("2025-06-18", "client")


def _wire_error(data: bytes, codec: Codec = SERVER) -> WireError:
    with pytest.raises(WireError) as info:
        message = codec.decode_one(data)
        if isinstance(message, Request):
            codec.request_params(message)
    return info.value


# -- envelope ---------------------------------------------------------------------------------


def test_request_decodes_in_two_stages() -> None:
    message = SERVER.decode_one(
        b'{"jsonrpc":"2.0","id":"a-1","method":"tools/call","params":{"name":"echo","arguments":{"text":"hi"}}}'
    )
    assert isinstance(message, Request)
    assert message.id == "a-1"
    assert isinstance(message.params, msgspec.Raw)
    assert json.loads(bytes(message.params)) == {"name": "echo", "arguments": {"text": "hi"}}
    params = SERVER.request_params(message)
    assert isinstance(params, v0618.CallToolRequestParams)
    assert params.name == "echo"
    assert params.arguments == {"text": "hi"}


def test_message_kinds() -> None:
    assert isinstance(
        SERVER.decode_one(b'{"jsonrpc":"2.0","method":"notifications/initialized"}'), Notification
    )
    response = CLIENT.decode_one(b'{"jsonrpc":"2.0","id":3,"result":{}}')
    assert isinstance(response, Response) and response.id == 3
    error = CLIENT.decode_one(b'{"jsonrpc":"2.0","id":null,"error":{"code":-32700,"message":"Parse error"}}')
    assert isinstance(error, ErrorResponse)
    assert error.id is None and error.error.code == PARSE_ERROR


def test_absent_params_decode_to_defaults() -> None:
    message = SERVER.decode_one(b'{"jsonrpc":"2.0","id":1,"method":"tools/list"}')
    assert isinstance(message, Request)
    params = SERVER.request_params(message)
    assert isinstance(params, v0618.ListToolsRequestParams)
    assert params.cursor is msgspec.UNSET


def test_raw_params_pass_through_unchanged() -> None:
    original = b'{"name":"echo","arguments":{"z":1,"a":[1.5,null,"\\u00e9"]}}'
    message = SERVER.decode_one(b'{"jsonrpc":"2.0","id":9,"method":"tools/call","params":' + original + b"}")
    assert isinstance(message, Request)
    forwarded = Codec.encode_request(message.id, message.method, message.params)
    assert original in forwarded


@pytest.mark.parametrize(
    ("data", "code", "fragment"),
    [
        pytest.param(b'{"jsonrpc":"2.0","id":1,"method":', PARSE_ERROR, "Parse error", id="truncated"),
        pytest.param(b"not json", PARSE_ERROR, "Parse error", id="garbage"),
        pytest.param(
            b'{"jsonrpc":"1.0","id":1,"method":"ping"}', INVALID_REQUEST, "`$.jsonrpc`", id="jsonrpc-1.0"
        ),
        pytest.param(b'{"id":1,"method":"ping"}', INVALID_REQUEST, "`jsonrpc`", id="jsonrpc-missing"),
        pytest.param(b'{"jsonrpc":"2.0","id":1.5,"method":"ping"}', INVALID_REQUEST, "`$.id`", id="id-float"),
        pytest.param(b'{"jsonrpc":"2.0","id":true,"method":"ping"}', INVALID_REQUEST, "`$.id`", id="id-bool"),
        pytest.param(b'{"jsonrpc":"2.0","id":null,"method":"ping"}', INVALID_REQUEST, "`$.id`", id="id-null"),
        pytest.param(b'{"jsonrpc":"2.0","id":[1],"method":"ping"}', INVALID_REQUEST, "`$.id`", id="id-array"),
        pytest.param(b'{"jsonrpc":"2.0","id":1,"method":7}', INVALID_REQUEST, "`$.method`", id="method-int"),
        pytest.param(b'{"jsonrpc":"2.0","id":1}', INVALID_REQUEST, "needs `method`", id="no-method"),
        pytest.param(b"42", INVALID_REQUEST, "Expected `object`", id="scalar"),
        pytest.param(b'[{"jsonrpc":"2.0","id":1,"method":"ping"}]', INVALID_REQUEST, "batches", id="batch"),
        pytest.param(
            b'{"jsonrpc":"2.0","id":1,"result":{},"error":{"code":1,"message":"x"}}',
            INVALID_REQUEST,
            "both",
            id="result-and-error",
        ),
        pytest.param(
            b'{"jsonrpc":"2.0","id":1,"method":"no/such"}', METHOD_NOT_FOUND, "no/such", id="unknown"
        ),
        pytest.param(
            b'{"jsonrpc":"2.0","id":1,"method":"sampling/createMessage","params":{}}',
            METHOD_NOT_FOUND,
            "sampling/createMessage",
            id="wrong-direction",
        ),
        pytest.param(
            b'{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":5}}',
            INVALID_PARAMS,
            "`params.name`",
            id="wrong-type",
        ),
        pytest.param(
            b'{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"arguments":{}}}',
            INVALID_PARAMS,
            "`name`",
            id="missing-required",
        ),
        pytest.param(
            b'{"jsonrpc":"2.0","id":1,"method":"tools/call"}', INVALID_PARAMS, "`params`", id="missing-params"
        ),
        pytest.param(
            b'{"jsonrpc":"2.0","id":1,"method":"logging/setLevel","params":{"level":"loud"}}',
            INVALID_PARAMS,
            "`params.level`",
            id="bad-enum",
        ),
        pytest.param(
            b'{"jsonrpc":"2.0","id":1,"method":"completion/complete","params":'
            b'{"ref":{"type":"ref/nothing"},"argument":{"name":"a","value":"b"}}}',
            INVALID_PARAMS,
            "`params.ref.type`",
            id="wrong-tag",
        ),
    ],
)
def test_invalid_input_gets_the_right_error(data: bytes, code: int, fragment: str) -> None:
    error = _wire_error(data)
    assert error.code == code
    assert fragment in error.message
    with pytest.raises(WireError) as one_pass:
        SERVER.decode_typed(data)
    assert (one_pass.value.code, one_pass.value.message, one_pass.value.id) == (code, error.message, error.id)
    answer = json.loads(Codec.encode_wire_error(error))
    assert answer["jsonrpc"] == "2.0"
    assert answer["error"]["code"] == code
    assert "Traceback" not in answer["error"]["message"]


def test_errors_keep_the_request_id_when_it_can_be_read() -> None:
    assert _wire_error(b'{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":5}}').id == 1
    assert _wire_error(b'{"jsonrpc":"1.0","id":"x","method":"ping"}').id == "x"
    parse = _wire_error(b"{oops")
    assert parse.id is None
    assert json.loads(Codec.encode_wire_error(parse))["id"] is None


def _typed(message: object) -> tuple[object, ...]:
    if isinstance(message, TypedRequest):
        return ("request", message.id, message.method, message.params)
    assert isinstance(message, TypedNotification)
    return ("notification", message.method, message.params)


def test_one_pass_decode() -> None:
    typed = SERVER.decode_typed(b'{"jsonrpc":"2.0","id":5,"method":"tools/call","params":{"name":"echo"}}')
    assert _typed(typed) == ("request", 5, "tools/call", v0618.CallToolRequestParams(name="echo"))
    assert _typed(SERVER.decode_typed(b'{"jsonrpc":"2.0","id":6,"method":"ping"}')) == (
        "request",
        6,
        "ping",
        {},
    )
    note = SERVER.decode_typed(
        b'{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":5}}'
    )
    assert _typed(note) == (
        "notification",
        "notifications/cancelled",
        v0618.CancelledNotificationParams(request_id=5),
    )
    # A notification method sent with an id is a request for a method the server does not have.
    with pytest.raises(WireError) as info:
        SERVER.decode_typed(b'{"jsonrpc":"2.0","id":7,"method":"notifications/initialized"}')
    assert (info.value.code, info.value.id) == (METHOD_NOT_FOUND, 7)
    response = CLIENT.decode_typed(b'{"jsonrpc":"2.0","id":8,"result":{}}')
    assert isinstance(response, Response)
    log = CLIENT.decode_typed(
        b'{"jsonrpc":"2.0","method":"notifications/message","params":{"level":"info","data":{"x":[1]}}}'
    )
    assert _typed(log) == (
        "notification",
        "notifications/message",
        v0618.LoggingMessageNotificationParams(level="info", data={"x": [1]}),
    )
    # Taken by the two-stage path (an unknown content type), the result is the same.
    slow = CLIENT.decode_typed(
        b'{"jsonrpc":"2.0","id":9,"method":"sampling/createMessage","params":{"maxTokens":5,'
        b'"messages":[{"role":"user","content":{"type":"hologram"}}]}}'
    )
    assert isinstance(slow, TypedRequest) and slow.method == "sampling/createMessage"
    assert isinstance(slow.params.messages[0].content, UnknownContent)
    batch = Codec.for_version("2025-03-26", "server").decode_typed(
        b'[{"jsonrpc":"2.0","id":1,"method":"ping"},{"jsonrpc":"2.0","id":2,"method":"nope"}]'
    )
    assert isinstance(batch, list)
    assert _typed(batch[0]) == ("request", 1, "ping", {})
    assert isinstance(batch[1], WireError) and batch[1].code == METHOD_NOT_FOUND


def test_batches_only_where_the_version_has_them() -> None:
    codec = Codec.for_version("2025-03-26", "server")
    batch = codec.decode(
        b'[{"jsonrpc":"2.0","id":1,"method":"ping"},{"jsonrpc":"2.0","method":"notifications/initialized"},7]'
    )
    assert isinstance(batch, list) and len(batch) == 3
    assert isinstance(batch[0], Request) and batch[0].method == "ping"
    assert isinstance(batch[1], Notification)
    assert isinstance(batch[2], WireError) and batch[2].code == INVALID_REQUEST
    with pytest.raises(WireError) as empty:
        codec.decode(b"[]")
    assert empty.value.code == INVALID_REQUEST
    for version in [p.version for p in load_pins() if not load(p.version).methods.BATCHING]:
        with pytest.raises(WireError) as info:
            Codec.for_version(version, "server").decode(b'[{"jsonrpc":"2.0","id":1,"method":"ping"}]')
        assert info.value.code == INVALID_REQUEST


def test_encode_from_structs() -> None:
    result = v0618.CallToolResult(content=[v0618.TextContent(text="hi")], is_error=False)
    assert json.loads(Codec.encode_result(4, result)) == {
        "jsonrpc": "2.0",
        "id": 4,
        "result": {"content": [{"type": "text", "text": "hi"}], "isError": False},
    }
    params = v0618.CallToolRequestParams(name="echo")
    assert json.loads(Codec.encode_request("r", "tools/call", params)) == {
        "jsonrpc": "2.0",
        "id": "r",
        "method": "tools/call",
        "params": {"name": "echo"},
    }
    assert json.loads(Codec.encode_notification("notifications/initialized")) == {
        "jsonrpc": "2.0",
        "method": "notifications/initialized",
    }
    assert json.loads(Codec.encode_error(None, PARSE_ERROR, "Parse error")) == {
        "jsonrpc": "2.0",
        "id": None,
        "error": {"code": PARSE_ERROR, "message": "Parse error"},
    }


# -- decoding policy --------------------------------------------------------------------------


def test_unknown_fields_are_ignored() -> None:
    params = decode(b'{"name":"echo","futureField":{"x":1},"arguments":{}}', v0618.CallToolRequestParams)
    assert params.name == "echo"
    tool = decode(b'{"name":"t","inputSchema":{"type":"object"},"brandNew":true}', v0618.Tool)
    assert tool.name == "t"


def test_unknown_content_type_is_kept() -> None:
    raw = (
        b'{"content":[{"type":"text","text":"a"},{"type":"hologram","frames":[1,2],"_meta":{"k":"v"}},'
        b'{"type":"image","data":"AA==","mimeType":"image/png"}],"isError":false}'
    )
    result = decode(raw, v0618.CallToolResult)
    assert isinstance(result.content[0], v0618.TextContent)
    unknown = result.content[1]
    assert isinstance(unknown, UnknownContent)
    assert unknown.type == "hologram"
    assert unknown["frames"] == [1, 2]
    assert isinstance(result.content[2], v0618.ImageContent)
    assert json.loads(msgspec.json.encode(result)) == json.loads(raw)


def test_unknown_content_type_in_a_single_block_and_in_a_whole_message() -> None:
    raw = b'{"messages":[{"role":"user","content":{"type":"tool_use","id":"1","name":"x","input":{}}}]}'
    prompt = decode(raw, v0618.GetPromptResult)
    assert isinstance(prompt.messages[0].content, UnknownContent)
    assert json.loads(msgspec.json.encode(prompt)) == json.loads(raw)
    message = CLIENT.decode_one(b'{"jsonrpc":"2.0","id":2,"result":{"content":[{"type":"x-new"}]}}')
    assert isinstance(message, Response)
    result = CLIENT.result(v0618.methods.TOOLS_CALL, message)
    assert isinstance(result.content[0], UnknownContent)


def test_unknown_tag_outside_content_is_still_an_error() -> None:
    with pytest.raises(msgspec.ValidationError, match=r"\$\.ref\.type"):
        decode(
            b'{"ref":{"type":"ref/other"},"argument":{"name":"a","value":"b"}}', v0618.CompleteRequestParams
        )
    with pytest.raises(msgspec.ValidationError, match=r"\$\.type"):
        decode(b'{"type":"image","text":"x"}', v0618.TextContent)


def test_open_objects_keep_every_key() -> None:
    schema = {
        "$schema": "https://json-schema.org/draft/2020-12/schema",
        "type": "object",
        "properties": {"a": {"type": "integer", "minimum": 0}},
        "$defs": {"x": {"type": "string"}},
        "additionalProperties": False,
        "required": ["a"],
    }
    tool = decode(json.dumps({"name": "t", "inputSchema": schema, "_meta": {"a/b": 1}}).encode(), v1125.Tool)
    assert tool.input_schema == schema
    assert tool.meta == {"a/b": 1}
    caps = decode(b'{"experimental":{"x":{"y":[1]}},"sampling":{"new":true}}', v0618.ClientCapabilities)
    assert caps.experimental == {"x": {"y": [1]}}
    assert caps.sampling == {"new": True}
    result = decode(b'{"content":[],"structuredContent":{"deep":{"n":null}}}', v0618.CallToolResult)
    assert result.structured_content == {"deep": {"n": None}}


def test_untagged_unions_pick_the_member_that_fits() -> None:
    contents = decode(
        b'{"contents":[{"uri":"a","text":"t"},{"uri":"b","blob":"AA==","mimeType":"x/y"}]}',
        v0618.ReadResourceResult,
    )
    assert isinstance(contents.contents[0], v0618.TextResourceContents)
    assert isinstance(contents.contents[1], v0618.BlobResourceContents)
    schemas = decode(
        b'{"type":"string","enum":["a","b"],"enumNames":["A","B"]}', v0618.PrimitiveSchemaDefinition
    )
    assert isinstance(schemas, v0618.EnumSchema) and schemas.enum_names == ["A", "B"]
    plain = decode(b'{"type":"string","format":"email"}', v0618.PrimitiveSchemaDefinition)
    assert isinstance(plain, v0618.StringSchema) and plain.format == "email"
    with pytest.raises(msgspec.ValidationError, match="matches no member"):
        decode(b'{"contents":[{"uri":"a"}]}', v0618.ReadResourceResult)


def test_elicitation_modes_2025_11_25() -> None:
    url = decode(
        b'{"mode":"url","message":"Sign in","url":"https://example.com","elicitationId":"e"}',
        v1125.ElicitRequestParams,
    )
    assert isinstance(url, v1125.ElicitRequestURLParams)
    form = decode(
        b'{"message":"Name?","requestedSchema":{"type":"object","properties":{}}}', v1125.ElicitRequestParams
    )
    assert isinstance(form, v1125.ElicitRequestFormParams)


def test_result_type_discriminates_2026_07_28() -> None:
    spec = v0728.methods.TOOLS_CALL
    needs_input = spec.decode_result(b'{"resultType":"input_required","requestState":"s","content":[]}')
    assert isinstance(needs_input, v0728.InputRequiredResult)
    done = spec.decode_result(b'{"resultType":"complete","content":[{"type":"text","text":"ok"}]}')
    assert isinstance(done, v0728.CallToolResult)
    legacy = spec.decode_result(b'{"content":[]}')
    assert isinstance(legacy, v0728.CallToolResult) and legacy.result_type == "complete"


def test_parse_error_id_is_nullable_in_every_version() -> None:
    for module, name in (
        (v0618, "JSONRPCError"),
        (v1125, "JSONRPCErrorResponse"),
        (v0728, "JSONRPCErrorResponse"),
    ):
        raw = b'{"jsonrpc":"2.0","id":null,"error":{"code":-32700,"message":"Parse error"}}'
        value = decode(raw, getattr(module, name))
        assert value.id is None
        assert json.loads(msgspec.json.encode(value)) == json.loads(raw)


def test_plain_msgspec_says_how_to_decode_an_untagged_union() -> None:
    """msgspec cannot decode the schema's untagged unions without mcpbind's hook: its error
    names the union and the way to decode it, and both ways work."""
    from mcpbind.protocol.unions import dec_hook

    EmbeddedResource, TextResourceContents = v1125.EmbeddedResource, v1125.TextResourceContents
    data = b'{"type":"resource","resource":{"uri":"file:///a","text":"hi"}}'
    with pytest.raises(msgspec.ValidationError) as plain:
        msgspec.json.decode(data, type=EmbeddedResource)
    assert str(plain.value) == (
        "Expected `TextResourceContentsOrBlobResourceContents (an untagged union: decode with"
        " mcpbind.protocol.unions.decode, or pass dec_hook=mcpbind.protocol.unions.dec_hook)`, got `dict` - at `$.resource`"
    )
    expected = EmbeddedResource(resource=TextResourceContents(uri="file:///a", text="hi"))
    assert decode(data, EmbeddedResource) == expected
    assert msgspec.json.decode(data, type=EmbeddedResource, dec_hook=dec_hook) == expected


def test_the_one_pass_is_taken_for_a_well_formed_request_or_notification(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """decode_typed decodes a request or notification of a known method in one msgspec pass:
    the two stages (:meth:`Codec.decode` and the params' decode) are not called for it. They
    are for what the one pass leaves to them (a response, an error), which shows that the
    count below would see them."""
    codec = Codec(schema_for("2025-06-18").methods, "server")  # its own: the shared one stays untouched
    calls = count_two_stage_calls(codec, monkeypatch)
    call = b'{"jsonrpc":"2.0","id":5,"method":"tools/call","params":{"name":"echo"}}'
    note = b'{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":5}}'
    for data in (call, memoryview(call), bytearray(call), note, memoryview(note)):
        assert isinstance(codec.decode_typed(data), TypedRequest | TypedNotification)
    assert calls == []
    with pytest.raises(WireError):
        codec.decode_typed(b'{"jsonrpc":"2.0","id":5,"method":"tools/call","params":{"name":5}}')
    assert calls == ["decode", "request_params"]
