"""Older protocol versions, sans-io: handlers see one set of types whatever was negotiated, and
what goes out to a peer of an older version is cut down to what that version defines, so no
member it does not know is ever sent to it."""

from __future__ import annotations

import json

import msgspec
import pytest

from mcpbind import types
from mcpbind.protocol.connection import Connection, RequestReceived
from mcpbind.protocol.encoded import Encoded
from mcpbind.versions import HANDLER_VERSION
from tests.protocol.connections import client, handshake, message, ready_server, replies, reply, server

methods = types.methods
RESULT = types.CallToolResult(content=[types.TextContent(text="3")], structured_content={"sum": 3})
TOOL = types.Tool(name="add", title="Add", input_schema={"type": "object"})


def _answer(version: str, method: str, params: object, result: object) -> object:
    """What a server of ``version`` sends for ``result``, the answer to a request ``method``."""
    side = ready_server(version)
    (event,) = side.receive(message(id=1, method=method, params=params))
    assert isinstance(event, RequestReceived)
    data = side.respond(1, side.spec_of(method), result)
    assert data is not None
    return json.loads(data)["result"]


@pytest.mark.parametrize(
    ("version", "sent"),
    [
        ("2024-11-05", {"content": [{"type": "text", "text": "3"}]}),
        ("2025-03-26", {"content": [{"type": "text", "text": "3"}]}),
        ("2025-06-18", {"content": [{"type": "text", "text": "3"}], "structuredContent": {"sum": 3}}),
        ("2025-11-25", {"content": [{"type": "text", "text": "3"}], "structuredContent": {"sum": 3}}),
    ],
)
def test_a_result_goes_out_as_the_negotiated_version_defines_it(version: str, sent: object) -> None:
    # structuredContent came with 2025-06-18.
    assert _answer(version, "tools/call", {"name": "add"}, RESULT) == sent


def test_members_a_version_lacks_are_dropped_deep_inside_a_result() -> None:
    # Tool.title came with 2025-06-18.
    listing = types.ListToolsResult(tools=[TOOL])
    assert _answer("2025-03-26", "tools/list", {}, listing) == {
        "tools": [{"name": "add", "inputSchema": {"type": "object"}}]
    }
    assert _answer("2025-06-18", "tools/list", {}, listing) == {
        "tools": [{"name": "add", "title": "Add", "inputSchema": {"type": "object"}}]
    }


def test_an_encoded_result_goes_out_as_the_negotiated_version_defines_it() -> None:
    encoded = Encoded.of(RESULT)
    for version, sent in [
        ("2025-03-26", {"content": [{"type": "text", "text": "3"}]}),
        ("2025-11-25", {"content": [{"type": "text", "text": "3"}], "structuredContent": {"sum": 3}}),
    ]:
        assert _answer(version, "tools/call", {"name": "add"}, encoded) == sent


def test_a_notification_goes_out_as_the_negotiated_version_defines_it() -> None:
    # ProgressNotificationParams.message came with 2025-03-26.
    progress = types.ProgressNotificationParams(progress_token="t", progress=1, message="half")
    old = ready_server("2024-11-05").notification(methods.NOTIFICATIONS_PROGRESS, progress)
    assert json.loads(old)["params"] == {"progressToken": "t", "progress": 1}
    new = ready_server("2025-03-26").notification(methods.NOTIFICATIONS_PROGRESS, progress)
    assert json.loads(new)["params"] == {"progressToken": "t", "progress": 1, "message": "half"}


def test_a_clients_notification_goes_out_as_the_negotiated_version_defines_it() -> None:
    # A client reports progress too (on a request the server sent it).
    progress = types.ProgressNotificationParams(progress_token=4, progress=2, total=3, message="two")
    for version, expected in [
        ("2024-11-05", {"progressToken": 4, "progress": 2, "total": 3}),
        ("2025-03-26", {"progressToken": 4, "progress": 2, "total": 3, "message": "two"}),
    ]:
        side = client()
        handshake(server(), side, version)
        assert json.loads(side.notification(methods.NOTIFICATIONS_PROGRESS, progress))["params"] == expected


def test_a_notification_without_params_or_unknown_to_the_version_goes_as_given() -> None:
    side = ready_server("2024-11-05")
    assert side.notification(methods.NOTIFICATIONS_TOOLS_LIST_CHANGED) == (
        b'{"jsonrpc":"2.0","method":"notifications/tools/list_changed"}'
    )
    # elicitation/complete came with 2025-11-25: an older version has no type to cut it down
    # to (whether to send it at all is the sender's call).
    complete = types.ElicitationCompleteNotificationParams(elicitation_id="e1")
    data = ready_server("2025-06-18").notification(methods.NOTIFICATIONS_ELICITATION_COMPLETE, complete)
    assert json.loads(data)["params"] == {"elicitationId": "e1"}


def test_a_clients_request_goes_out_as_the_negotiated_version_defines_it() -> None:
    # CallToolRequestParams.task came with 2025-11-25.
    params = types.CallToolRequestParams(name="add", task=types.TaskMetadata(ttl=1000))
    for version, expected in [
        ("2025-06-18", {"name": "add"}),
        ("2025-11-25", {"name": "add", "task": {"ttl": 1000}}),
    ]:
        side = client()
        handshake(server(), side, version)
        _, data = side.start_request(methods.TOOLS_CALL, params)
        assert json.loads(data)["params"] == expected, version


def test_handlers_see_the_same_types_whatever_was_negotiated() -> None:
    for version in ("2024-11-05", "2025-06-18"):
        (event,) = ready_server(version).receive(message(id=1, method="tools/call", params={"name": "add"}))
        assert isinstance(event, RequestReceived)
        assert type(event.params) is types.CallToolRequestParams


def test_the_initialize_result_carries_only_what_the_version_defines() -> None:
    # A server's title (Implementation.title) came with 2025-06-18.
    info = types.Implementation(name="s", version="1", title="The Server")
    old = Connection("server", info, types.ServerCapabilities())
    assert reply(old.receive(_initialize("2025-03-26")))["result"]["serverInfo"] == {
        "name": "s",
        "version": "1",
    }
    new = Connection("server", info, types.ServerCapabilities())
    assert reply(new.receive(_initialize("2025-06-18")))["result"]["serverInfo"] == {
        "name": "s",
        "version": "1",
        "title": "The Server",
    }


def _initialize(version: str) -> bytes:
    params = {"protocolVersion": version, "capabilities": {}, "clientInfo": {"name": "c", "version": "1"}}
    return message(id=1, method="initialize", params=params)


def test_batches_are_read_only_from_a_peer_of_the_version_that_has_them() -> None:
    batch = b"[" + message(id=1, method="ping") + b"]"
    assert reply(ready_server("2025-06-18").receive(batch))["error"]["code"] == -32600
    assert replies(ready_server("2025-03-26").receive(batch)) == [{"jsonrpc": "2.0", "id": 1, "result": {}}]


def test_an_encoded_result_shared_between_sessions_goes_to_each_as_its_version_defines_it() -> None:
    # One Encoded shared between sessions of different versions: each peer gets its own version
    # of it (structuredContent came with 2025-06-18), the same every time it is sent.
    encoded = Encoded.of(RESULT)
    full = {"content": [{"type": "text", "text": "3"}], "structuredContent": {"sum": 3}}
    for _ in range(2):
        assert _answer("2024-11-05", "tools/call", {"name": "add"}, encoded) == {"content": full["content"]}
        assert _answer("2025-06-18", "tools/call", {"name": "add"}, encoded) == full


def test_an_encoded_result_goes_to_a_peer_of_the_handler_version_byte_for_byte() -> None:
    # Not re-decoded: members no struct defines and the bytes' own layout are kept.
    data = b'{ "content": [], "vendorExtra": 1 }'
    side = ready_server(HANDLER_VERSION)
    side.receive(message(id=1, method="tools/call", params={"name": "add"}))
    sent = side.respond(1, side.spec_of("tools/call"), Encoded(data))
    assert sent is not None and data in sent


def test_a_result_unknown_to_an_older_version_or_forwarded_raw_goes_as_given() -> None:
    # tasks/get came with 2025-11-25: nothing to cut its result down to. A result forwarded as
    # received (msgspec.Raw, a proxy's) is the other side's business.
    task = {"taskId": "t", "status": "working", "ttl": None, "createdAt": "x", "lastUpdatedAt": "x"}
    assert _answer("2025-06-18", "tasks/get", {"taskId": "t"}, Encoded.of(task)) == task
    forwarded = msgspec.Raw(b'{"content":[],"structuredContent":{"sum":3}}')
    assert _answer("2024-11-05", "tools/call", {"name": "add"}, forwarded) == {
        "content": [],
        "structuredContent": {"sum": 3},
    }


def test_the_result_of_a_request_kept_raw_goes_out_as_the_negotiated_version_defines_it() -> None:
    # A proxy keeps tools/call's params as received; what it answers is still cut down.
    side = ready_server("2024-11-05", raw_params=frozenset({"tools/call"}))
    (event,) = side.receive(message(id=1, method="tools/call", params={"name": "add"}))
    assert isinstance(event, RequestReceived) and type(event.params) is msgspec.Raw
    data = side.respond(1, side.spec_of("tools/call"), RESULT)
    assert data is not None
    assert json.loads(data)["result"] == {"content": [{"type": "text", "text": "3"}]}
