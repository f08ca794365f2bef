"""What the codec rejects on its own, with no connection around it: each stage's exact JSON-RPC
error code, the id it names (or ``None``), and that both decoding paths (the one-pass
:meth:`Codec.decode_typed` and the two stages) agree."""

from __future__ import annotations

import msgspec
import pytest

from mcpbind.protocol.wire import (
    INTERNAL_ERROR,
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

SERVER = Codec.for_version("2025-06-18", "server")
CLIENT = Codec.for_version("2025-06-18", "client")
BATCHING = Codec.for_version("2025-03-26", "server")  # the one version with JSON-RPC batches

PING = b'{"jsonrpc":"2.0","id":1,"method":"ping"}'


def _two_stage_error(codec: Codec, data: bytes | bytearray | memoryview) -> WireError:
    """The error of :meth:`Codec.decode_one` and then the params' stage."""
    with pytest.raises(WireError) as info:
        message = codec.decode_one(data)
        if isinstance(message, Request):
            codec.request_params(message)
        elif isinstance(message, Notification):
            codec.notification_params(message)
    return info.value


def _one_pass_error(codec: Codec, data: bytes | bytearray | memoryview) -> WireError:
    with pytest.raises(WireError) as info:
        codec.decode_typed(data)
    return info.value


def _both(codec: Codec, data: bytes | bytearray | memoryview) -> tuple[int, str, object, object]:
    """The (code, message, id, response id) of the error; both paths must give the same."""
    two, one = _two_stage_error(codec, data), _one_pass_error(codec, data)
    seen = (two.code, two.message, two.id, two.response_id)
    assert (one.code, one.message, one.id, one.response_id) == seen
    return seen


# -- batches -------------------------------------------------------------------------------------


def test_decode_one_refuses_a_batch_even_where_the_version_has_them() -> None:
    batch = b"[" + PING + b"]"
    decoded = BATCHING.decode(batch)
    assert isinstance(decoded, list) and isinstance(decoded[0], Request)
    with pytest.raises(WireError) as refused:
        BATCHING.decode_one(batch)
    assert (refused.value.code, refused.value.message, refused.value.id) == (
        INVALID_REQUEST,
        "Invalid request: a batch is not allowed here",
        None,
    )
    # One message is one message, there as anywhere.
    assert isinstance(BATCHING.decode_one(PING), Request)


# -- UTF-8 -----------------------------------------------------------------------------------------

# Invalid UTF-8 in a member no struct names: msgspec skips it unread.
_BAD_REQUEST = b'{"jsonrpc":"2.0","id":4,"method":"tools/list","x":"\xff"}'
_BAD_NOTE = b'{"jsonrpc":"2.0","method":"notifications/initialized","x":"\xc3("}'


@pytest.mark.parametrize("kind", [bytes, bytearray, memoryview], ids=lambda k: k.__name__)
@pytest.mark.parametrize(
    ("data", "ident", "at"),
    [(_BAD_REQUEST, 4, 51), (_BAD_NOTE, None, 59)],
    ids=["request", "notification"],
)
def test_invalid_utf8_is_a_parse_error_even_where_msgspec_reads_nothing(
    kind: type[bytes | bytearray | memoryview], data: bytes, ident: int | None, at: int
) -> None:
    assert _both(SERVER, kind(data)) == (PARSE_ERROR, f"Parse error: invalid UTF-8 at byte {at}", ident, None)


@pytest.mark.parametrize("kind", [bytes, bytearray, memoryview], ids=lambda k: k.__name__)
def test_valid_utf8_beyond_ascii_is_accepted(kind: type[bytes | bytearray | memoryview]) -> None:
    data = '{"jsonrpc":"2.0","id":4,"method":"tools/list","x":"é €"}'.encode()
    typed = SERVER.decode_typed(kind(data))
    assert isinstance(typed, TypedRequest) and typed.id == 4
    message = SERVER.decode_one(kind(data))
    assert isinstance(message, Request) and message.id == 4


# -- the shape of a message ------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("data", "ident"),
    [
        (b'{"jsonrpc":"2.0","id":4,"method":"ping","result":{}}', 4),
        (b'{"jsonrpc":"2.0","id":"e","method":"ping","error":{"code":1,"message":"m"}}', "e"),
        (b'{"jsonrpc":"2.0","method":"notifications/initialized","result":{}}', None),
        (b'{"jsonrpc":"2.0","method":"notifications/initialized","error":{"code":1,"message":"m"}}', None),
    ],
    ids=["request-result", "request-error", "notification-result", "notification-error"],
)
def test_a_message_with_a_method_and_an_outcome_is_an_invalid_request(data: bytes, ident: object) -> None:
    assert _both(SERVER, data) == (
        INVALID_REQUEST,
        "Invalid request: a message cannot have both `method` and `result`/`error`",
        ident,
        None,
    )


@pytest.mark.parametrize(
    "data",
    [b'{"jsonrpc":"2.0","id":null,"result":{}}', b'{"jsonrpc":"2.0","result":{"tools":[]}}'],
    ids=["null", "absent"],
)
def test_a_result_without_an_id_is_an_invalid_request(data: bytes) -> None:
    assert _both(CLIENT, data) == (
        INVALID_REQUEST,
        "Invalid request: a result response needs a string or integer `$.id`",
        None,
        None,
    )


def test_an_error_response_may_have_a_null_or_no_id() -> None:
    # JSON-RPC answers a request whose id could not be read with "id": null; 2025-11-25 lets
    # the member be left out. Neither names a request of ours.
    null = CLIENT.decode_one(b'{"jsonrpc":"2.0","id":null,"error":{"code":-32700,"message":"p"}}')
    assert isinstance(null, ErrorResponse) and null.id is None
    absent = CLIENT.decode_one(b'{"jsonrpc":"2.0","error":{"code":-32600,"message":"i"}}')
    assert isinstance(absent, ErrorResponse) and absent.id is msgspec.UNSET
    assert absent.error.code == INVALID_REQUEST


# -- params ------------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("data", "message"),
    [
        (
            b'{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":true}}',
            "Invalid params: Expected `int | str`, got `bool` - at `params.requestId`",
        ),
        (
            b'{"jsonrpc":"2.0","method":"notifications/progress","params":{"progressToken":1,"progress":"x"}}',
            "Invalid params: Expected `int | float`, got `str` - at `params.progress`",
        ),
        (
            b'{"jsonrpc":"2.0","method":"notifications/cancelled"}',
            "Invalid params: Object missing required field `params`",
        ),
    ],
    ids=["wrong-id-type", "wrong-number", "no-params"],
)
def test_notification_params_that_do_not_fit_are_invalid_params(data: bytes, message: str) -> None:
    assert _both(SERVER, data) == (INVALID_PARAMS, message, None, None)


def test_an_unknown_notification_is_method_not_found_without_an_id() -> None:
    data = b'{"jsonrpc":"2.0","method":"notifications/nope"}'
    assert _both(SERVER, data) == (METHOD_NOT_FOUND, "Method not found: notifications/nope", None, None)


# Params kept as received but never checked: a message built by hand (a transport's, a proxy's)
# rather than read by stage one, which would have refused them. The second stage says so too.
_NOT_TEXT = [b'{"name":"\\udfff"}', b'{"name":', b'{"name":"x"}x']


@pytest.mark.parametrize("params", _NOT_TEXT, ids=["surrogate", "cut-off", "trailing"])
def test_request_params_that_are_not_json_text_are_a_parse_error_naming_the_request(params: bytes) -> None:
    with pytest.raises(WireError) as info:
        SERVER.request_params(Request("r", "tools/call", msgspec.Raw(params)))
    assert (info.value.code, info.value.id) == (PARSE_ERROR, "r")
    assert info.value.message.startswith("Parse error: "), info.value.message


@pytest.mark.parametrize("params", _NOT_TEXT, ids=["surrogate", "cut-off", "trailing"])
def test_notification_params_that_are_not_json_text_are_a_parse_error(params: bytes) -> None:
    with pytest.raises(WireError) as info:
        SERVER.notification_params(Notification("notifications/roots/list_changed", msgspec.Raw(params)))
    assert (info.value.code, info.value.id) == (PARSE_ERROR, None)
    assert info.value.message.startswith("Parse error: "), info.value.message


def test_params_that_fit_decode_on_both_paths() -> None:
    # The counterpart of the errors above: the same messages, well formed, are accepted.
    note = b'{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":"x","reason":"r"}}'
    typed = SERVER.decode_typed(note)
    assert isinstance(typed, TypedNotification) and typed.params.request_id == "x"
    message = SERVER.decode_one(note)
    assert isinstance(message, Notification)
    assert SERVER.notification_params(message) == typed.params


# -- results ----------------------------------------------------------------------------------------


def _result_error(result: bytes, ident: int = 3) -> WireError:
    with pytest.raises(WireError) as info:
        CLIENT.result(CLIENT.requests["tools/list"], Response(ident, msgspec.Raw(result)))
    return info.value


def test_a_result_of_the_wrong_shape_is_an_internal_error_naming_the_path() -> None:
    error = _result_error(b'{"tools":[{"name":5,"inputSchema":{"type":"object"}}]}')
    assert (error.code, error.id, error.response_id) == (INTERNAL_ERROR, 3, None)
    assert error.message == "Invalid result: Expected `str`, got `int` - at `result.tools[0].name`"
    missing = _result_error(b"{}", 9)
    assert (missing.code, missing.id) == (INTERNAL_ERROR, 9)
    assert missing.message == "Invalid result: Object missing required field `tools`"


def test_a_result_that_is_not_text_is_an_internal_error() -> None:
    error = _result_error(b'{"tools":[{"name":"\\udfff","inputSchema":{"type":"object"}}]}')
    assert (error.code, error.id) == (INTERNAL_ERROR, 3)
    assert error.message.startswith("Invalid result: JSON is malformed: invalid utf-16 surrogate pair")


def test_a_result_that_fits_decodes() -> None:
    result = CLIENT.result(CLIENT.requests["tools/list"], Response(3, msgspec.Raw(b'{"tools":[]}')))
    assert result.tools == []
