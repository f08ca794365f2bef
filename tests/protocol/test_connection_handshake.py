"""The connection's lifecycle, sans-io: initialize and initialized on both sides, the version a
server picks, and what is refused before the handshake. Bytes in, events and bytes out."""

from __future__ import annotations

import json

import msgspec
import pytest

from mcpbind import McpError, types
from mcpbind.protocol.connection import (
    Connection,
    ErrorReceived,
    Phase,
    Reply,
    RequestReceived,
    ResponseReceived,
    SessionReady,
)
from mcpbind.protocol.errors import INVALID_REQUEST, METHOD_NOT_FOUND, UNSUPPORTED_PROTOCOL_VERSION
from mcpbind.versions import HANDSHAKE_VERSIONS
from tests.protocol.connections import (
    CLIENT_INFO,
    SERVER_INFO,
    client,
    handshake,
    initialize_request,
    message,
    reply,
    server,
)

NEWEST = HANDSHAKE_VERSIONS[0]  # the newest with a handshake


def phase(side: Connection) -> Phase:
    """Where ``side`` is now (read through a call, so that a type checker does not keep an earlier
    answer)."""
    return side.phase


@pytest.mark.parametrize("version", HANDSHAKE_VERSIONS)
def test_a_server_answers_initialize_with_the_version_asked_for(version: str) -> None:
    side = server()
    sampling = types.ClientCapabilities(sampling=types.ClientCapabilitiesSampling())
    answer = reply(side.receive(initialize_request(version, sampling, id=7)))
    assert answer == {
        "jsonrpc": "2.0",
        "id": 7,
        "result": {
            "protocolVersion": version,
            "capabilities": {"tools": {}},
            "serverInfo": {"name": "test-server", "version": "1.0"},
        },
    }
    assert side.protocol_version == version
    assert side.phase is Phase.INITIALIZING
    assert side.peer.info == CLIENT_INFO
    assert side.peer.capabilities.sampling == types.ClientCapabilitiesSampling()


@pytest.mark.parametrize("asked", ["1999-01-01", "2026-07-28", "next"])
def test_a_version_the_server_does_not_speak_gets_its_newest(asked: str) -> None:
    # 2026-07-28 is spoken, but never through initialize: it has no handshake.
    answer = reply(server().receive(initialize_request(asked)))
    assert answer["result"]["protocolVersion"] == NEWEST


def test_a_server_speaks_only_the_versions_it_was_given() -> None:
    only = server(versions=("2025-03-26",))
    assert reply(only.receive(initialize_request(NEWEST)))["result"]["protocolVersion"] == "2025-03-26"
    with pytest.raises(LookupError, match="1999-01-01"):
        server(versions=("1999-01-01",))


def test_instructions_are_sent_only_when_given() -> None:
    answer = reply(server(instructions="Call add.").receive(initialize_request(NEWEST)))
    assert answer["result"]["instructions"] == "Call add."
    assert "instructions" not in reply(server().receive(initialize_request(NEWEST)))["result"]


def test_initialized_makes_the_server_ready_once() -> None:
    side = server()
    # Before initialize, a stray initialized changes nothing.
    assert side.receive(message(method="notifications/initialized")) == []
    assert phase(side) is Phase.NEW
    reply(side.receive(initialize_request(NEWEST)))
    assert side.receive(message(method="notifications/initialized")) == [SessionReady()]
    assert phase(side) is Phase.READY
    assert side.receive(message(method="notifications/initialized")) == []


def test_requests_before_initialize_are_refused_and_ping_is_answered() -> None:
    side = server()
    assert reply(side.receive(message(id=3, method="tools/list"))) == {
        "jsonrpc": "2.0",
        "id": 3,
        "error": {"code": INVALID_REQUEST, "message": "Received tools/list before initialization"},
    }
    assert reply(side.receive(message(id="p", method="ping"))) == {"jsonrpc": "2.0", "id": "p", "result": {}}
    assert side.phase is Phase.NEW
    # Between the answer to initialize and initialized, requests are served.
    reply(side.receive(initialize_request(NEWEST)))
    (event,) = side.receive(message(id=4, method="tools/list"))
    assert isinstance(event, RequestReceived) and event.method == "tools/list"


def test_initialize_twice_is_refused() -> None:
    side = server()
    reply(side.receive(initialize_request("2025-06-18")))
    assert reply(side.receive(initialize_request("2024-11-05", id=2))) == {
        "jsonrpc": "2.0",
        "id": 2,
        "error": {"code": INVALID_REQUEST, "message": "The session is already initialized"},
    }
    assert side.protocol_version == "2025-06-18"


@pytest.mark.parametrize("ready", [False, True], ids=["new", "ready"])
def test_a_client_answers_initialize_with_method_not_found_and_carries_on(ready: bool) -> None:
    side = client()
    if ready:
        handshake(server(), side, NEWEST)
    before = phase(side)
    (event,) = side.receive(initialize_request(NEWEST, id=7))
    assert isinstance(event, Reply) and event.id == 7
    assert json.loads(event.data) == {
        "jsonrpc": "2.0",
        "id": 7,
        "error": {"code": METHOD_NOT_FOUND, "message": "Method not found: initialize"},
    }
    assert phase(side) is before and side.protocol_version == (NEWEST if ready else None)
    # Nothing of it was kept: the client's own handshake (or its next request) goes as before.
    if ready:
        side.start_request(types.methods.TOOLS_LIST, types.PaginatedRequestParams())
    else:
        handshake(server(), side, NEWEST)
        assert phase(side) is Phase.READY


def test_the_client_side_of_the_handshake() -> None:
    side = client(types.ClientCapabilities(roots=types.ClientCapabilitiesRoots(list_changed=True)))
    params = types.InitializeRequestParams(
        protocol_version="2025-06-18", capabilities=side.capabilities, client_info=CLIENT_INFO
    )
    ident, data = side.start_request(types.methods.INITIALIZE, params)
    assert json.loads(data) == {
        "jsonrpc": "2.0",
        "id": ident,
        "method": "initialize",
        "params": {
            "protocolVersion": "2025-06-18",
            "capabilities": {"roots": {"listChanged": True}},
            "clientInfo": {"name": "test-client", "version": "2.0"},
        },
    }
    assert phase(side) is Phase.INITIALIZING
    answer = message(
        id=ident,
        result={
            "protocolVersion": "2025-06-18",
            "capabilities": {"prompts": {}},
            "serverInfo": {"name": "far", "version": "9"},
            "instructions": "Be brief.",
        },
    )
    (event,) = side.receive(answer)
    assert isinstance(event, ResponseReceived) and event.id == ident
    assert isinstance(event.result, types.InitializeResult)
    assert side.initialized(event.result) == b'{"jsonrpc":"2.0","method":"notifications/initialized"}'
    assert phase(side) is Phase.READY
    assert side.protocol_version == "2025-06-18"
    assert side.peer.info == types.Implementation(name="far", version="9")
    assert side.peer.capabilities.prompts == types.ServerCapabilitiesPrompts()
    assert side.peer.instructions == "Be brief."


def test_a_client_refuses_a_version_it_does_not_speak() -> None:
    side = client()
    params = types.InitializeRequestParams(
        protocol_version=NEWEST, capabilities=side.capabilities, client_info=CLIENT_INFO
    )
    side.start_request(types.methods.INITIALIZE, params)
    result = types.InitializeResult(
        protocol_version="2099-01-01", capabilities=types.ServerCapabilities(), server_info=SERVER_INFO
    )
    with pytest.raises(McpError) as refused:
        side.initialized(result)
    assert refused.value.code == INVALID_REQUEST
    assert refused.value.message == (
        "The server answered with protocol version '2099-01-01', which this client does not support "
        f"({', '.join(side.versions)})"
    )
    assert side.phase is Phase.INITIALIZING


def test_a_server_without_instructions_leaves_the_clients_none() -> None:
    side = client()
    params = types.InitializeRequestParams(
        protocol_version=NEWEST, capabilities=side.capabilities, client_info=CLIENT_INFO
    )
    side.start_request(types.methods.INITIALIZE, params)
    side.initialized(
        types.InitializeResult(
            protocol_version=NEWEST, capabilities=types.ServerCapabilities(), server_info=SERVER_INFO
        )
    )
    assert side.peer.instructions is None


def test_a_server_speaking_only_stateless_versions_refuses_initialize_naming_them() -> None:
    side = server(versions=("2026-07-28",))
    answer = reply(side.receive(initialize_request("2025-06-18", id=4)))
    assert answer["id"] == 4
    assert answer["error"] == {
        "code": UNSUPPORTED_PROTOCOL_VERSION,
        "message": "Unsupported protocol version '2025-06-18'; supported: 2026-07-28",
        "data": {"supported": ["2026-07-28"], "requested": "2025-06-18"},
    }
    assert phase(side) is Phase.NEW


def test_a_proxys_session_keeps_the_params_of_its_raw_methods_as_received() -> None:
    side = server(raw_params=frozenset({"tools/call"}))
    reply(side.receive(initialize_request("2025-06-18")))
    assert side.receive(message(method="notifications/initialized")) == [SessionReady()]
    (event,) = side.receive(message(id=2, method="tools/call", params={"name": "t", "arguments": {"a": 1}}))
    assert isinstance(event, RequestReceived) and type(event.params) is msgspec.Raw


def test_a_refused_initialize_lets_the_client_try_again() -> None:
    # A client probing which era a server speaks may be refused, and then asks again.
    side = client()
    params = types.InitializeRequestParams(
        protocol_version=NEWEST, capabilities=side.capabilities, client_info=CLIENT_INFO
    )
    ident, _ = side.start_request(types.methods.INITIALIZE, params)
    refusal = {"code": -32602, "message": "Unsupported protocol version", "data": {"supported": ["x"]}}
    (event,) = side.receive(message(id=ident, error=refusal))
    assert isinstance(event, ErrorReceived) and event.error.code == -32602
    assert phase(side) is Phase.NEW
    again, _ = side.start_request(types.methods.INITIALIZE, params)
    assert again != ident and phase(side) is Phase.INITIALIZING


def test_an_error_answer_to_another_request_leaves_the_client_ready() -> None:
    server_side, side = server(), client()
    handshake(server_side, side, NEWEST)
    ident, _ = side.start_request(types.methods.TOOLS_LIST, types.PaginatedRequestParams())
    (event,) = side.receive(message(id=ident, error={"code": -32603, "message": "boom"}))
    assert isinstance(event, ErrorReceived)
    assert phase(side) is Phase.READY


def test_both_sides_agree_on_the_version() -> None:
    server_side, client_side = server(), client()
    result = handshake(server_side, client_side, "2025-03-26")
    assert (
        result.protocol_version
        == server_side.protocol_version
        == client_side.protocol_version
        == "2025-03-26"
    )
    assert server_side.phase is client_side.phase is Phase.READY
    assert client_side.peer.info == SERVER_INFO and server_side.peer.info == CLIENT_INFO


def test_what_may_not_be_sent_before_or_instead_of_initialize() -> None:
    side = client()
    with pytest.raises(McpError, match="before initialization"):
        side.start_request(types.methods.TOOLS_LIST, types.PaginatedRequestParams())
    # ping may go first; initialize only once, and only from the client.
    ident, data = side.start_request(types.methods.PING, types.RequestParams())
    assert json.loads(data) == {"jsonrpc": "2.0", "id": ident, "method": "ping", "params": {}}
    params = types.InitializeRequestParams(
        protocol_version=NEWEST, capabilities=side.capabilities, client_info=CLIENT_INFO
    )
    side.start_request(types.methods.INITIALIZE, params)
    with pytest.raises(McpError, match="initialize is sent once, by the client, first"):
        side.start_request(types.methods.INITIALIZE, params)
    with pytest.raises(McpError, match="initialize is sent once"):
        server().start_request(types.methods.INITIALIZE, params)


def test_a_server_may_skip_the_handshake_at_a_version_it_speaks() -> None:
    side = server()
    side.assume_ready("2025-06-18")
    assert (side.phase, side.protocol_version) == (Phase.READY, "2025-06-18")
    (event,) = side.receive(message(id=1, method="tools/list"))
    assert isinstance(event, RequestReceived)
    with pytest.raises(ValueError, match=r"^only a new server connection can skip the handshake$"):
        side.assume_ready("2025-06-18")
    with pytest.raises(ValueError, match="unsupported protocol version '2026-07-28'"):
        server().assume_ready("2026-07-28")
    with pytest.raises(ValueError):
        client().assume_ready(NEWEST)


def test_a_fresh_copy_keeps_the_state_and_forgets_the_traffic() -> None:
    side = server()
    side.assume_ready("2025-06-18")
    side.receive(message(id=1, method="tools/list"))
    copy = side.fresh()
    assert (copy.phase, copy.protocol_version) == (Phase.READY, "2025-06-18")
    # Id 1 is in flight on the original only.
    (event,) = copy.receive(message(id=1, method="tools/list"))
    assert isinstance(event, RequestReceived)
    assert reply(side.receive(message(id=1, method="tools/list")))["error"]["code"] == INVALID_REQUEST
