"""What a connection refuses to send, sans-io: :meth:`Connection.start_request` raises
``INVALID_REQUEST`` and nothing goes out for a request sent too early, by the wrong side, or of
another era; what the specification allows (a ping either way, at any time) goes.

MCP 2025-06-18 (basic/lifecycle, basic/utilities/ping): before the handshake a client sends
nothing but ``initialize`` and pings; ping "can be sent by either party" and the receiver answers
it at once; each other request belongs to one side."""

from __future__ import annotations

import json
from typing import Any

import pytest

from mcpbind import McpError, types
from mcpbind.protocol.connection import Connection, Phase, ResponseReceived
from mcpbind.protocol.errors import INVALID_REQUEST
from mcpbind.protocol.methods import RequestSpec
from mcpbind.versions import HANDSHAKE_VERSIONS, schema_for
from tests.protocol.connections import CLIENT_INFO, client, handshake, reply, server

methods = types.methods
# Every request, as the handler-facing table has them.
REQUESTS: list[RequestSpec[Any, Any, Any]] = list(methods.REQUESTS.values())
SERVER_ONLY = [s for s in REQUESTS if not s.direction.sent_by_client()]
CLIENT_ONLY = [s for s in REQUESTS if not s.direction.sent_by_server()]
ROOTS = types.ClientCapabilities(roots=types.ClientCapabilitiesRoots())
STATELESS = schema_for("2026-07-28").methods.REQUESTS


def _refusal(side: Connection, spec: RequestSpec[Any, Any, Any], params: Any = None) -> str:
    """The message of the ``INVALID_REQUEST`` that ``side`` raises for ``spec``; no id is used up."""
    before = side.next_request_id
    with pytest.raises(McpError) as refused:
        side.start_request(spec, params)
    assert refused.value.code == INVALID_REQUEST
    assert side.next_request_id == before
    return refused.value.message


def _ready_pair(version: str = HANDSHAKE_VERSIONS[0]) -> tuple[Connection, Connection]:
    server_side, client_side = server(), client(ROOTS)
    handshake(server_side, client_side, version)
    return server_side, client_side


# -- the handshake first ----------------------------------------------------------------------------


def test_neither_side_sends_a_request_before_initialization() -> None:
    assert _refusal(client(), methods.TOOLS_LIST) == "Cannot send tools/list before initialization"
    assert _refusal(server(), methods.ROOTS_LIST) == "Cannot send roots/list before initialization"
    # Once a client has sent initialize, the guard lets its requests go: the specification's
    # "SHOULD NOT" before the answer arrives is left to the caller (the client API awaits it).
    side = client()
    params = types.InitializeRequestParams(
        protocol_version=HANDSHAKE_VERSIONS[0], capabilities=side.capabilities, client_info=CLIENT_INFO
    )
    side.start_request(methods.INITIALIZE, params)
    assert side.phase is Phase.INITIALIZING
    side.start_request(methods.TOOLS_LIST, types.PaginatedRequestParams())


@pytest.mark.parametrize("make", [client, server], ids=["client", "server"])
def test_a_ping_may_go_before_initialization(make: Any) -> None:
    side: Connection = make()
    ident, data = side.start_request(methods.PING, types.RequestParams())
    assert json.loads(data) == {"jsonrpc": "2.0", "id": ident, "method": "ping", "params": {}}
    assert side.awaits_response(ident)


# -- each side its own requests --------------------------------------------------------------------


@pytest.mark.parametrize("spec", SERVER_ONLY, ids=lambda s: s.method)
def test_a_client_does_not_send_a_servers_request(spec: RequestSpec[Any, Any, Any]) -> None:
    _, client_side = _ready_pair()
    assert _refusal(client_side, spec) == f"A client does not send {spec.method}"


@pytest.mark.parametrize("spec", CLIENT_ONLY, ids=lambda s: s.method)
def test_a_server_does_not_send_a_clients_request(spec: RequestSpec[Any, Any, Any]) -> None:
    server_side, _ = _ready_pair()
    expected = (
        "initialize is sent once, by the client, first"
        if spec.method == "initialize"
        else f"A server does not send {spec.method}"
    )
    assert _refusal(server_side, spec) == expected


def test_a_server_never_sends_initialize_not_even_first() -> None:
    params = types.InitializeRequestParams(
        protocol_version=HANDSHAKE_VERSIONS[0],
        capabilities=types.ClientCapabilities(),
        client_info=CLIENT_INFO,
    )
    assert _refusal(server(), methods.INITIALIZE, params) == "initialize is sent once, by the client, first"


def test_the_lists_above_are_not_empty() -> None:
    assert {"roots/list", "sampling/createMessage", "elicitation/create"} <= {s.method for s in SERVER_ONLY}
    assert {"initialize", "tools/call", "resources/read"} <= {s.method for s in CLIENT_ONLY}


@pytest.mark.parametrize("version", HANDSHAKE_VERSIONS)
def test_a_server_pings_its_client_and_gets_the_answer(version: str) -> None:
    # Ping goes both ways (basic/utilities/ping); a client answers it itself, whatever it declared.
    server_side, client_side = server(), client()
    handshake(server_side, client_side, version)
    ident, data = server_side.start_request(methods.PING, types.RequestParams())
    assert json.loads(data) == {"jsonrpc": "2.0", "id": ident, "method": "ping", "params": {}}
    answer = reply(client_side.receive(data))
    assert answer == {"jsonrpc": "2.0", "id": ident, "result": {}}
    (event,) = server_side.receive(json.dumps(answer).encode())
    assert event == ResponseReceived(ident, types.Result())


# -- eras: the stateless protocol's methods and the ones it dropped -------------------------------


def test_a_stateless_client_does_not_send_what_that_protocol_dropped() -> None:
    side = client()
    side.adopt("2026-07-28", None, types.ServerCapabilities())
    for spec in (methods.PING, methods.LOGGING_SET_LEVEL, methods.RESOURCES_SUBSCRIBE):
        assert _refusal(side, spec) == (
            f"{spec.method} is not part of protocol version 2026-07-28 (stateless: no handshake, "
            "no session state); nothing was sent"
        )
    side.start_request(methods.TOOLS_LIST, types.PaginatedRequestParams())


def test_a_session_client_does_not_send_the_stateless_protocols_methods() -> None:
    _, side = _ready_pair("2025-11-25")
    for method in ("server/discover", "subscriptions/listen"):
        assert _refusal(side, STATELESS[method], {}) == (
            f"{method} is not part of protocol version 2025-11-25; nothing was sent"
        )


def test_a_new_client_may_probe_with_server_discover() -> None:
    # Before any handshake, server/discover is how a client finds out which era the server speaks.
    side = client()
    ident, data = side.start_request(STATELESS["server/discover"], {})
    assert json.loads(data) == {"jsonrpc": "2.0", "id": ident, "method": "server/discover", "params": {}}
    assert side.phase is Phase.NEW
