"""What a connection answers to bytes it cannot accept, sans-io: the exact JSON-RPC error (parse
error, invalid request, method not found, invalid params naming the path), with the request's
id whenever it can be read from the broken message; and how a broken answer to one of our own
requests fails that request."""

from __future__ import annotations

import json
import sys
from fnmatch import fnmatchcase

import pytest

from mcpbind import McpError, types
from mcpbind.protocol.connection import (
    Connection,
    ErrorReceived,
    RequestReceived,
    ResponseReceived,
    UnmatchedResponse,
)
from mcpbind.protocol.errors import (
    INTERNAL_ERROR,
    INVALID_PARAMS,
    INVALID_REQUEST,
    METHOD_NOT_FOUND,
    PARSE_ERROR,
    URL_ELICITATION_REQUIRED,
    URLElicitationRequiredError,
)
from mcpbind.protocol.wire import RequestId
from tests.protocol.connections import client, handshake, message, ready_server, replies, reply, server

# Deeper than msgspec can decode at the interpreter's recursion limit.
TOO_DEEP = b"[" * (sys.getrecursionlimit() + 100) + b"]" * (sys.getrecursionlimit() + 100)


def _call(id: bytes, params: bytes) -> bytes:
    return b'{"jsonrpc":"2.0","id":' + id + b',"method":"tools/call","params":' + params + b"}"


@pytest.mark.parametrize(
    ("data", "id", "code", "text"),
    [
        # Not JSON at all: nothing can be read, the id is null.
        pytest.param(b"not json", None, PARSE_ERROR, "Parse error: JSON is malformed: *", id="garbage"),
        pytest.param(b"", None, PARSE_ERROR, "Parse error: *", id="empty"),
        # Broken JSON whose id can still be read: the error names the request.
        pytest.param(
            b'{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":',
            7,
            PARSE_ERROR,
            "Parse error: Input data was truncated",
            id="cut-off",
        ),
        pytest.param(
            _call(b'"a"', b'{"name":"\xff"}'),
            "a",
            PARSE_ERROR,
            "Parse error: invalid UTF-8 at byte 66",
            id="utf-8",
        ),
        pytest.param(
            _call(b"5", b'{"name":"\\udfff"}'),
            5,
            PARSE_ERROR,
            "Parse error: JSON is malformed: *",
            id="surrogate",
        ),
        pytest.param(
            _call(b"6", b'{"name":"x","arguments":{"a":' + TOO_DEEP + b"}}"),
            6,
            PARSE_ERROR,
            "Parse error: JSON nested too deeply",
            id="too-deep",
        ),
        # JSON, but no valid message.
        pytest.param(
            b'{"jsonrpc":"1.0","id":3,"method":"ping"}',
            3,
            INVALID_REQUEST,
            "Invalid request: * - at `$.jsonrpc`",
            id="jsonrpc-1.0",
        ),
        pytest.param(
            b'{"jsonrpc":"2.0","id":null,"method":"ping"}',
            None,
            INVALID_REQUEST,
            "Invalid request: `$.id` must be a string or an integer, not null",
            id="id-null",
        ),
        pytest.param(
            b'{"jsonrpc":"2.0","id":1}',
            1,
            INVALID_REQUEST,
            "Invalid request: a message needs `method` (request, notification), `result` or `error`",
            id="no-method",
        ),
        pytest.param(
            b'{"jsonrpc":"2.0"}',
            None,
            INVALID_REQUEST,
            "Invalid request: a message needs `method` (request, notification), `result` or `error`",
            id="nothing",
        ),
        pytest.param(
            b'{"jsonrpc":"2.0","id":10,"method":"ping","result":{}}',
            10,
            INVALID_REQUEST,
            "Invalid request: a message cannot have both `method` and `result`/`error`",
            id="method-and-result",
        ),
        pytest.param(
            b'{"jsonrpc":"2.0","id":"e","method":"ping","error":{"code":1,"message":"m"}}',
            "e",
            INVALID_REQUEST,
            "Invalid request: a message cannot have both `method` and `result`/`error`",
            id="method-and-error",
        ),
        pytest.param(
            b'{"jsonrpc":"2.0","method":"notifications/initialized","result":{}}',
            None,
            INVALID_REQUEST,
            "Invalid request: a message cannot have both `method` and `result`/`error`",
            id="notification-and-result",
        ),
        # A result no request can be told from: invalid, not taken for an answer and dropped.
        pytest.param(
            b'{"jsonrpc":"2.0","id":null,"result":{}}',
            None,
            INVALID_REQUEST,
            "Invalid request: a result response needs a string or integer `$.id`",
            id="result-id-null",
        ),
        pytest.param(
            b'{"jsonrpc":"2.0","result":{}}',
            None,
            INVALID_REQUEST,
            "Invalid request: a result response needs a string or integer `$.id`",
            id="result-id-absent",
        ),
        pytest.param(
            b'{"jsonrpc":"2.0","id":14,"method":"tools/list","x":"\xff"}',
            14,
            PARSE_ERROR,
            "Parse error: invalid UTF-8 at byte 52",
            id="utf-8-unread-member",
        ),
        pytest.param(
            b'[{"jsonrpc":"2.0","id":1,"method":"ping"}]',
            None,
            INVALID_REQUEST,
            "Invalid request: JSON-RPC batches are not supported in this protocol version",
            id="batch",
        ),
        # A valid message this side has no method for (or that the other side receives).
        pytest.param(
            b'{"jsonrpc":"2.0","id":8,"method":"tools/nope"}',
            8,
            METHOD_NOT_FOUND,
            "Method not found: tools/nope",
            id="unknown-method",
        ),
        pytest.param(
            b'{"jsonrpc":"2.0","id":9,"method":"sampling/createMessage","params":{}}',
            9,
            METHOD_NOT_FOUND,
            "Method not found: sampling/createMessage",
            id="wrong-direction",
        ),
        # Params that do not fit the method's type: the path is named.
        pytest.param(
            _call(b"11", b'{"name":5}'),
            11,
            INVALID_PARAMS,
            "Invalid params: Expected `str`, got `int` - at `params.name`",
            id="wrong-type",
        ),
        pytest.param(
            _call(b'"q"', b'{"name":"x","arguments":[1]}'),
            "q",
            INVALID_PARAMS,
            "Invalid params: Expected `object`, got `array` - at `params.arguments`",
            id="nested-path",
        ),
        pytest.param(
            b'{"jsonrpc":"2.0","id":12,"method":"tools/call"}',
            12,
            INVALID_PARAMS,
            "Invalid params: Object missing required field `params`",
            id="no-params",
        ),
        pytest.param(
            b'{"jsonrpc":"2.0","id":13,"method":"logging/setLevel","params":{"level":"loud"}}',
            13,
            INVALID_PARAMS,
            "Invalid params: Invalid enum value 'loud' - at `params.level`",
            id="bad-enum",
        ),
    ],
)
def test_a_message_that_cannot_be_accepted_gets_the_exact_error(
    data: bytes, id: int | str | None, code: int, text: str
) -> None:
    side = ready_server("2025-06-18")
    answer = reply(side.receive(data))
    assert set(answer) == {"jsonrpc", "id", "error"}
    assert answer["jsonrpc"] == "2.0"
    assert answer["id"] == id
    assert answer["error"]["code"] == code
    # "*" stands for msgspec's own words (which say where the JSON broke).
    assert fnmatchcase(answer["error"]["message"], text), answer["error"]["message"]
    assert set(answer["error"]) == {"code", "message"}
    # The connection goes on, and the id of the refused request was never taken: it can be
    # used again at once.
    again = 100 if id is None else id
    (event,) = side.receive(message(id=again, method="tools/list"))
    assert event == RequestReceived(again, "tools/list", types.PaginatedRequestParams())


def test_errors_are_answered_before_initialization_too() -> None:
    answer = reply(server().receive(b"{oops"))
    assert (answer["id"], answer["error"]["code"]) == (None, PARSE_ERROR)


@pytest.mark.parametrize(
    "data",
    [
        b'{"jsonrpc":"2.0","method":"tools/nope"}',
        b'{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":true}}',
        b'{"jsonrpc":"2.0","method":"notifications/progress","params":{"progress":"half"}}',
    ],
    ids=["unknown", "invalid-params", "wrong-type"],
)
def test_a_bad_notification_is_never_answered(data: bytes) -> None:
    side = ready_server("2025-06-18")
    assert side.receive(data) == []
    (event,) = side.receive(message(id=1, method="tools/list"))
    assert isinstance(event, RequestReceived)


def test_a_batch_where_the_version_has_them_gets_one_answer_per_member() -> None:
    side = ready_server("2025-03-26")
    batch = b"[" + b",".join([message(id=1, method="ping"), message(id=2, method="tools/nope"), b"7"]) + b"]"
    answers = replies(side.receive(batch))
    assert answers[0] == {"jsonrpc": "2.0", "id": 1, "result": {}}
    assert answers[1] == {
        "jsonrpc": "2.0",
        "id": 2,
        "error": {"code": METHOD_NOT_FOUND, "message": "Method not found: tools/nope"},
    }
    assert (answers[2]["id"], answers[2]["error"]["code"]) == (None, INVALID_REQUEST)
    empty = reply(side.receive(b"[]"))
    assert empty["error"] == {"code": INVALID_REQUEST, "message": "Invalid request: empty batch"}


def _client_waiting() -> tuple[Connection, RequestId]:
    """A ready client with one tools/list request pending; its id."""
    side = client()
    handshake(server(), side, "2025-06-18")
    ident, _ = side.start_request(types.methods.TOOLS_LIST, types.PaginatedRequestParams())
    return side, ident


def test_a_broken_response_fails_the_request_it_answers() -> None:
    side, ident = _client_waiting()
    (event,) = side.receive(b'{"jsonrpc":"2.0","id":' + json.dumps(ident).encode() + b',"result":{"tools":[')
    assert isinstance(event, ErrorReceived) and event.id == ident
    assert event.error.code == INTERNAL_ERROR
    assert event.error.message.startswith("Invalid response: Parse error: ")
    # It is no longer pending: the real answer, late, matches nothing.
    assert side.receive(message(id=ident, result={"tools": []})) == [UnmatchedResponse(ident)]


def test_a_broken_response_to_no_request_of_ours_matches_nothing() -> None:
    side, ident = _client_waiting()
    assert side.receive(b'{"jsonrpc":"2.0","id":99,"result":{"tools":[') == [UnmatchedResponse(99)]
    assert side.awaits_response(ident)


def test_a_result_that_does_not_fit_fails_the_request_naming_the_path() -> None:
    side, ident = _client_waiting()
    (event,) = side.receive(message(id=ident, result={"tools": [{"name": 5}]}))
    assert isinstance(event, ErrorReceived) and event.id == ident
    assert event.error.code == INTERNAL_ERROR
    assert event.error.message.startswith("Invalid result: ")
    assert "`result.tools[0].name`" in event.error.message
    # The request is over: a second answer matches nothing, and the next request is answered.
    assert not side.awaits_response(ident)
    assert side.receive(message(id=ident, result={"tools": []})) == [UnmatchedResponse(ident)]
    after, _ = side.start_request(types.methods.TOOLS_LIST, types.PaginatedRequestParams())
    assert side.receive(message(id=after, result={"tools": []})) == [
        ResponseReceived(after, types.ListToolsResult(tools=[]))
    ]


@pytest.mark.parametrize(
    "data",
    [b'{"jsonrpc":"2.0","id":null,"result":{"tools":[]}}', b'{"jsonrpc":"2.0","result":{"tools":[]}}'],
    ids=["null", "absent"],
)
def test_a_result_without_an_id_is_refused_and_the_request_still_waits(data: bytes) -> None:
    side, ident = _client_waiting()
    answer = reply(side.receive(data))
    assert (answer["id"], answer["error"]["code"]) == (None, INVALID_REQUEST)
    assert side.awaits_response(ident)
    assert side.receive(message(id=ident, result={"tools": []})) == [
        ResponseReceived(ident, types.ListToolsResult(tools=[]))
    ]


def test_an_error_response_fails_the_request_with_its_code_message_and_data() -> None:
    side, ident = _client_waiting()
    error = {"code": -32002, "message": "gone", "data": {"uri": "x:1"}}
    (event,) = side.receive(message(id=ident, error=error))
    assert isinstance(event, ErrorReceived) and type(event.error) is McpError and event.id == ident
    assert (event.error.code, event.error.message, event.error.data) == (-32002, "gone", {"uri": "x:1"})
    assert not side.awaits_response(ident)
    assert side.receive(message(id=ident, error=error)) == [UnmatchedResponse(ident)]


def test_url_elicitation_required_is_its_own_exception() -> None:
    side, ident = _client_waiting()
    elicitation = {"mode": "url", "elicitationId": "e1", "url": "https://example.com/x", "message": "Sign in"}
    error = {
        "code": URL_ELICITATION_REQUIRED,
        "message": "Needs sign-in",
        "data": {"elicitations": [elicitation]},
    }
    (event,) = side.receive(message(id=ident, error=error))
    assert isinstance(event, ErrorReceived) and isinstance(event.error, URLElicitationRequiredError)
    assert [e.url for e in event.error.elicitations] == ["https://example.com/x"]
