"""Requests, responses and notifications through a ready connection, sans-io: each message kind
becomes its event with typed params, ids are kept track of both ways, cancellation and progress
are events, and a server sends the client only what it declared it can take."""

from __future__ import annotations

import json
import re
from typing import Any

import msgspec
import pytest

from mcpbind import McpError, types
from mcpbind.protocol.connection import (
    CancelRequested,
    Connection,
    Delivery,
    NotificationReceived,
    ProgressReceived,
    RequestReceived,
    ResponseReceived,
    UnmatchedResponse,
)
from mcpbind.protocol.errors import INTERNAL_ERROR, INVALID_REQUEST
from mcpbind.protocol.methods import RequestSpec
from mcpbind.versions import HANDSHAKE_VERSIONS
from tests.protocol.connections import client, handshake, message, ready_server, reply, server

methods = types.methods


def _ready_client(capabilities: types.ClientCapabilities | None = None) -> tuple[Connection, Connection]:
    server_side, client_side = server(), client(capabilities)
    handshake(server_side, client_side, "2025-11-25")
    return server_side, client_side


# -- each message kind --------------------------------------------------------------------------


def test_a_request_becomes_an_event_with_typed_params() -> None:
    side = ready_server("2025-11-25")
    (event,) = side.receive(
        message(id="r1", method="tools/call", params={"name": "add", "arguments": {"a": 1}})
    )
    assert event == RequestReceived(
        "r1", "tools/call", types.CallToolRequestParams(name="add", arguments={"a": 1})
    )


def test_absent_params_are_the_params_types_defaults() -> None:
    (event,) = ready_server("2025-11-25").receive(message(id=2, method="tools/list"))
    assert event == RequestReceived(2, "tools/list", types.PaginatedRequestParams())


def test_a_notification_becomes_an_event_with_typed_params() -> None:
    side = ready_server("2025-11-25")
    (event,) = side.receive(message(method="notifications/roots/list_changed"))
    assert event == NotificationReceived("notifications/roots/list_changed", types.NotificationParams())
    _, client_side = _ready_client()
    data = message(method="notifications/message", params={"level": "warning", "data": {"disk": "full"}})
    (event,) = client_side.receive(data)
    assert event == NotificationReceived(
        "notifications/message",
        types.LoggingMessageNotificationParams(level="warning", data={"disk": "full"}),
    )


def test_a_response_becomes_the_typed_result_of_the_request_it_answers() -> None:
    server_side, client_side = server(), client()
    handshake(server_side, client_side, "2025-11-25")
    ident, request = client_side.start_request(methods.TOOLS_LIST, types.PaginatedRequestParams())
    assert json.loads(request) == {"jsonrpc": "2.0", "id": ident, "method": "tools/list", "params": {}}
    (received,) = server_side.receive(request)
    assert isinstance(received, RequestReceived) and received.id == ident
    tools = types.ListToolsResult(tools=[types.Tool(name="add", input_schema={"type": "object"})])
    answer = server_side.respond(ident, server_side.spec_of("tools/list"), tools)
    assert answer is not None
    assert json.loads(answer) == {
        "jsonrpc": "2.0",
        "id": ident,
        "result": {"tools": [{"name": "add", "inputSchema": {"type": "object"}}]},
    }
    assert client_side.receive(answer) == [ResponseReceived(ident, tools)]


def test_ping_is_answered_by_the_connection_itself() -> None:
    assert reply(ready_server("2025-11-25").receive(message(id=4, method="ping"))) == {
        "jsonrpc": "2.0",
        "id": 4,
        "result": {},
    }


def test_a_handler_error_goes_out_as_an_error_response() -> None:
    side = ready_server("2025-11-25")
    side.receive(message(id=5, method="tools/call", params={"name": "x"}))
    data = side.respond_error(5, McpError(-32002, "Resource not found", {"uri": "file:///x"}))
    assert data is not None
    assert json.loads(data) == {
        "jsonrpc": "2.0",
        "id": 5,
        "error": {"code": -32002, "message": "Resource not found", "data": {"uri": "file:///x"}},
    }
    # Data that cannot be encoded is left out; the error still goes.
    side.receive(message(id=6, method="tools/call", params={"name": "x"}))
    data = side.respond_error(6, McpError(INTERNAL_ERROR, "boom", object()))
    assert data is not None
    assert json.loads(data)["error"] == {"code": INTERNAL_ERROR, "message": "boom"}


# -- ids ------------------------------------------------------------------------------------------


def test_request_ids_count_up_from_one() -> None:
    _, side = _ready_client()
    ids = [side.start_request(methods.PING, types.RequestParams())[0] for _ in range(3)]
    assert ids == [2, 3, 4]  # id 1 was initialize


def test_a_response_to_an_unknown_id_is_dropped_as_unmatched() -> None:
    _, side = _ready_client()
    assert side.receive(message(id=99, result={})) == [UnmatchedResponse(99)]
    error = {"code": -32700, "message": "Parse error"}
    assert side.receive(message(id=None, error=error)) == [UnmatchedResponse(None)]
    assert side.receive(message(id="98", error=error)) == [UnmatchedResponse("98")]
    # An error answer without an id (2025-11-25 allows it) names no request either.
    assert side.receive(message(error=error)) == [UnmatchedResponse(None)]


def test_a_second_response_to_the_same_id_is_unmatched() -> None:
    _, side = _ready_client()
    ident, _ = side.start_request(methods.PING, types.RequestParams())
    assert side.receive(message(id=ident, result={})) == [ResponseReceived(ident, types.Result())]
    assert side.receive(message(id=ident, result={})) == [UnmatchedResponse(ident)]


def test_an_id_already_in_flight_is_refused_until_answered() -> None:
    side = ready_server("2025-11-25")
    call = message(id=5, method="tools/call", params={"name": "x"})
    assert isinstance(side.receive(call)[0], RequestReceived)
    assert reply(side.receive(call)) == {
        "jsonrpc": "2.0",
        "id": 5,
        "error": {"code": INVALID_REQUEST, "message": "Request id 5 is already in use"},
    }
    # The string "5" is another id.
    assert isinstance(
        side.receive(message(id="5", method="tools/call", params={"name": "x"}))[0], RequestReceived
    )
    assert side.respond(5, side.spec_of("tools/call"), types.CallToolResult(content=[])) is not None
    assert isinstance(side.receive(call)[0], RequestReceived)


def test_a_request_is_answered_once() -> None:
    side = ready_server("2025-11-25")
    side.receive(message(id=1, method="tools/list"))
    spec, result = side.spec_of("tools/list"), types.ListToolsResult(tools=[])
    assert side.respond(1, spec, result) is not None
    assert side.respond(1, spec, result) is None
    assert side.respond_error(1, McpError(INTERNAL_ERROR, "late")) is None
    assert side.respond(2, spec, result) is None  # never received


def test_an_error_answer_frees_the_requests_id() -> None:
    # Once answered, a request's id is the peer's to use again: the connection keeps nothing of
    # the requests that failed (nor of those whose error data could not be sent).
    side = ready_server("2025-11-25")
    call = message(id=5, method="tools/call", params={"name": "x"})
    for error in [McpError(INTERNAL_ERROR, "boom"), McpError(INTERNAL_ERROR, "boom", object())] * 2:
        (event,) = side.receive(call)
        assert isinstance(event, RequestReceived) and event.id == 5
        assert side.respond_error(5, error) is not None
        assert side.respond_error(5, error) is None  # no longer in flight
    (event,) = side.receive(call)
    assert isinstance(event, RequestReceived)


def test_a_forgotten_request_takes_no_response() -> None:
    _, side = _ready_client()
    ident, _ = side.start_request(methods.PING, types.RequestParams())
    side.forget(ident)
    assert side.receive(message(id=ident, result={})) == [UnmatchedResponse(ident)]


# -- cancellation ---------------------------------------------------------------------------------


def test_the_peer_cancelling_a_request_in_flight_is_an_event() -> None:
    side = ready_server("2025-11-25")
    side.receive(message(id=7, method="tools/call", params={"name": "slow"}))
    cancel = message(method="notifications/cancelled", params={"requestId": 7, "reason": "user quit"})
    assert side.receive(cancel) == [CancelRequested(7, "user quit")]
    no_reason = message(method="notifications/cancelled", params={"requestId": 7})
    assert side.receive(no_reason) == [CancelRequested(7, None)]
    # Once the handler stops, nothing is sent for it, and cancelling it again is ignored.
    side.abandon(7)
    assert side.respond(7, side.spec_of("tools/call"), types.CallToolResult(content=[])) is None
    assert side.receive(cancel) == []
    # A request already answered, or never received, is abandoned as quietly.
    side.abandon(7)
    side.abandon(8)


@pytest.mark.parametrize("version", HANDSHAKE_VERSIONS)
def test_the_reason_of_a_cancellation_reaches_the_peer_both_ways(version: str) -> None:
    server_side, client_side = (
        server(),
        client(types.ClientCapabilities(roots=types.ClientCapabilitiesRoots())),
    )
    handshake(server_side, client_side, version)
    # The client cancels its request to the server...
    ident, request = client_side.start_request(methods.TOOLS_CALL, types.CallToolRequestParams(name="slow"))
    assert isinstance(server_side.receive(request)[0], RequestReceived)
    cancel = client_side.cancel(ident, "user quit")
    assert cancel is not None and server_side.receive(cancel) == [CancelRequested(ident, "user quit")]
    # ...and the server its request to the client.
    ident, request = server_side.start_request(methods.ROOTS_LIST, types.RequestParams())
    assert isinstance(client_side.receive(request)[0], RequestReceived)
    cancel = server_side.cancel(ident, "no longer needed")
    assert cancel is not None and client_side.receive(cancel) == [CancelRequested(ident, "no longer needed")]
    # Without a reason, none arrives.
    ident, request = server_side.start_request(methods.ROOTS_LIST, types.RequestParams())
    client_side.receive(request)
    cancel = server_side.cancel(ident)
    assert cancel is not None and client_side.receive(cancel) == [CancelRequested(ident, None)]


def test_cancelling_an_unknown_or_finished_request_is_ignored() -> None:
    side = ready_server("2025-11-25")
    assert side.receive(message(method="notifications/cancelled", params={"requestId": 42})) == []
    side.receive(message(id=1, method="tools/list"))
    side.respond(1, side.spec_of("tools/list"), types.ListToolsResult(tools=[]))
    assert side.receive(message(method="notifications/cancelled", params={"requestId": 1})) == []


def test_cancelling_our_own_request() -> None:
    _, side = _ready_client()
    ident, _ = side.start_request(methods.TOOLS_LIST, types.PaginatedRequestParams())
    data = side.cancel(ident, "took too long")
    assert data is not None
    assert json.loads(data) == {
        "jsonrpc": "2.0",
        "method": "notifications/cancelled",
        "params": {"requestId": ident, "reason": "took too long"},
    }
    # No longer pending: a late answer is unmatched, a second cancel sends nothing.
    assert side.receive(message(id=ident, result={"tools": []})) == [UnmatchedResponse(ident)]
    assert side.cancel(ident) is None
    ident, _ = side.start_request(methods.PING, types.RequestParams())
    data = side.cancel(ident)
    assert data is not None
    assert json.loads(data)["params"] == {"requestId": ident}


def test_initialize_is_never_cancelled() -> None:
    side = client()
    params = types.InitializeRequestParams(
        protocol_version="2025-11-25", capabilities=side.capabilities, client_info=side.info
    )
    ident, _ = side.start_request(methods.INITIALIZE, params)
    assert side.cancel(ident) is None


# -- progress -------------------------------------------------------------------------------------


def test_a_request_asking_for_progress_carries_its_id_as_the_token() -> None:
    _, side = _ready_client()
    params = types.CallToolRequestParams(name="long", meta={"trace": "t1"})
    ident, data = side.start_request(methods.TOOLS_CALL, params, progress=True)
    assert json.loads(data)["params"] == {"name": "long", "_meta": {"trace": "t1", "progressToken": ident}}
    # Params in any form a caller (or a proxy, forwarding them as received) may give.
    ident, data = side.start_request(
        methods.TOOLS_CALL, {"name": "d", "_meta": {"trace": "t2"}}, progress=True
    )
    assert json.loads(data)["params"] == {"name": "d", "_meta": {"trace": "t2", "progressToken": ident}}
    raw = msgspec.Raw(b'{"name":"r","_meta":{"trace":"t3"}}')
    ident, data = side.start_request(methods.TOOLS_CALL, raw, progress=True)
    assert json.loads(data)["params"] == {"name": "r", "_meta": {"trace": "t3", "progressToken": ident}}
    ident, data = side.start_request(methods.PING, msgspec.Raw(b""), progress=True)
    assert json.loads(data)["params"] == {"_meta": {"progressToken": ident}}


@pytest.mark.parametrize(
    "params",
    [
        types.CallToolRequestParams(name="short"),
        types.CallToolRequestParams(name="short", meta={"trace": "t1"}),
        {"name": "short", "_meta": {"trace": "t1"}},
        msgspec.Raw(b'{"name":"short","_meta":{"trace":"t1"}}'),
    ],
    ids=["struct", "struct-meta", "mapping", "raw"],
)
def test_a_plain_request_carries_no_progress_token(params: Any) -> None:
    _, side = _ready_client()
    for _, data in (
        side.start_request(methods.TOOLS_CALL, params),
        side.start_request(methods.TOOLS_CALL, params, progress=False),
    ):
        assert b"progressToken" not in data
        sent = json.loads(data)["params"]
        assert sent["name"] == "short" and sent.get("_meta", {"trace": "t1"}) == {"trace": "t1"}


def test_progress_notifications_are_events_with_their_token() -> None:
    _, side = _ready_client()
    data = message(
        method="notifications/progress",
        params={"progressToken": 3, "progress": 5, "total": 10, "message": "half"},
    )
    (event,) = side.receive(data)
    assert event == ProgressReceived(
        3, types.ProgressNotificationParams(progress_token=3, progress=5, total=10, message="half")
    )
    server_side = ready_server("2025-11-25")
    (event,) = server_side.receive(
        message(method="notifications/progress", params={"progressToken": "t", "progress": 0.5})
    )
    assert isinstance(event, ProgressReceived) and event.token == "t" and event.params.progress == 0.5


def test_notifications_go_out_as_given() -> None:
    side = ready_server("2025-11-25")
    data = side.notification(methods.NOTIFICATIONS_TOOLS_LIST_CHANGED)
    assert data == b'{"jsonrpc":"2.0","method":"notifications/tools/list_changed"}'
    progress = types.ProgressNotificationParams(progress_token="t", progress=1, total=2)
    assert json.loads(side.notification(methods.NOTIFICATIONS_PROGRESS, progress)) == {
        "jsonrpc": "2.0",
        "method": "notifications/progress",
        "params": {"progressToken": "t", "progress": 1, "total": 2},
    }


# -- what may be sent -----------------------------------------------------------------------------


def _server_for(capabilities: types.ClientCapabilities, **options: object) -> Connection:
    return ready_server("2025-11-25", capabilities, **options)


def test_a_server_sends_a_request_only_when_the_client_declared_its_capability() -> None:
    bare = _server_for(types.ClientCapabilities())
    needs: list[tuple[RequestSpec[Any, Any, Any], Any, str]] = [
        (methods.ROOTS_LIST, types.RequestParams(), "roots"),
        (
            methods.SAMPLING_CREATE_MESSAGE,
            types.CreateMessageRequestParams(messages=[], max_tokens=5),
            "sampling",
        ),
        (
            methods.ELICITATION_CREATE,
            types.ElicitRequestFormParams(
                message="?", requested_schema=types.ElicitRequestFormParamsRequestedSchema(properties={})
            ),
            "elicitation",
        ),
    ]
    for spec, params, capability in needs:
        with pytest.raises(McpError) as refused:
            bare.start_request(spec, params)
        assert refused.value.code == INVALID_REQUEST
        assert refused.value.message == (
            f"The client did not declare the {capability!r} capability needed for {spec.method}; nothing was sent"
        )
    roots = _server_for(types.ClientCapabilities(roots=types.ClientCapabilitiesRoots()))
    ident, data = roots.start_request(methods.ROOTS_LIST, types.RequestParams())
    assert json.loads(data) == {"jsonrpc": "2.0", "id": ident, "method": "roots/list", "params": {}}


def test_sampling_with_tools_and_url_elicitation_need_their_sub_capabilities() -> None:
    side = _server_for(
        types.ClientCapabilities(
            sampling=types.ClientCapabilitiesSampling(), elicitation=types.ClientCapabilitiesElicitation()
        )
    )
    with_tools = types.CreateMessageRequestParams(messages=[], max_tokens=5, tools=[])
    with pytest.raises(
        McpError, match=re.escape("'sampling.tools' capability needed for sampling/createMessage with tools")
    ):
        side.start_request(methods.SAMPLING_CREATE_MESSAGE, with_tools)
    url = types.ElicitRequestURLParams(message="Sign in", url="https://example.com", elicitation_id="e")
    with pytest.raises(
        McpError, match=re.escape("'elicitation.url' capability needed for elicitation/create in url mode")
    ):
        side.start_request(methods.ELICITATION_CREATE, url)
    # What was declared goes.
    side.start_request(
        methods.SAMPLING_CREATE_MESSAGE, types.CreateMessageRequestParams(messages=[], max_tokens=5)
    )


def test_a_server_whose_transport_cannot_carry_a_request_refuses_it() -> None:
    delivery = Delivery(unrelated=False, mode="stateless HTTP", why="no stream", remedy="use sessions")
    side = _server_for(types.ClientCapabilities(roots=types.ClientCapabilitiesRoots()), delivery=delivery)
    with pytest.raises(McpError) as refused:
        side.start_request(methods.ROOTS_LIST, types.RequestParams())
    assert refused.value.message == (
        "Cannot send roots/list: stateless HTTP cannot send requests to the client from outside a "
        "request's handler (no stream); use sessions"
    )
    side.start_request(methods.ROOTS_LIST, types.RequestParams(), related=True)


def test_what_a_transport_cannot_deliver_is_not_declared() -> None:
    capabilities = types.ServerCapabilities(
        tools=types.ServerCapabilitiesTools(list_changed=True),
        resources=types.ServerCapabilitiesResources(subscribe=True, list_changed=True),
        logging={},
    )
    declared = Delivery(unrelated=False, related=False).declarable(capabilities)
    assert msgspec.to_builtins(declared) == {"tools": {}, "resources": {}}
    assert Delivery().declarable(capabilities) is capabilities
