"""A connection's state taken over instead of negotiated, sans-io: a server side resuming a
session another worker initialized, a client adopting a stateless version, the request ids a
worker numbers from, and a fresh copy of a connection made ready once."""

from __future__ import annotations

import json
from typing import Any

import msgspec
import pytest

from mcpbind import types
from mcpbind.protocol.connection import Connection, Phase, RequestReceived, SessionReady
from mcpbind.protocol.envelope import CLIENT_CAPABILITIES, CLIENT_INFO, PROTOCOL_VERSION
from tests.protocol.connections import CLIENT_INFO as CLIENT_IMPLEMENTATION
from tests.protocol.connections import SERVER_INFO, TOOLS, client, message, reply, server

methods = types.methods
MODERN = "2026-07-28"
META: dict[str, Any] = {
    PROTOCOL_VERSION: MODERN,
    CLIENT_CAPABILITIES: {},
    CLIENT_INFO: {"name": "raw", "version": "1"},
}
SAMPLING = types.ClientCapabilities(sampling=types.ClientCapabilitiesSampling())


def phase(side: Connection) -> Phase:
    """Where ``side`` is now (read through a call, so that a type checker keeps no earlier answer)."""
    return side.phase


# -- resume_initialized: a worker takes over a session another one initialized --------------------


def test_a_resumed_session_is_where_initialize_left_it() -> None:
    side = server()
    side.resume_initialized("2025-06-18", CLIENT_IMPLEMENTATION, SAMPLING)
    assert (side.phase, side.protocol_version) == (Phase.INITIALIZING, "2025-06-18")
    assert (side.peer.info, side.peer.capabilities) == (CLIENT_IMPLEMENTATION, SAMPLING)
    assert side.receive(message(method="notifications/initialized")) == [SessionReady()]
    assert phase(side) is Phase.READY
    (event,) = side.receive(message(id=3, method="tools/list"))
    assert isinstance(event, RequestReceived)
    # The client's capabilities stand: the server may ask it for a sampling.
    ident, _ = side.start_request(
        methods.SAMPLING_CREATE_MESSAGE,
        types.CreateMessageRequestParams(messages=[], max_tokens=1),
    )
    assert side.awaits_response(ident)


def test_only_a_new_server_side_resumes_a_session_it_speaks() -> None:
    taken = r"^only a new server connection can take a session over$"
    with pytest.raises(ValueError, match=taken):
        client().resume_initialized("2025-06-18", SERVER_INFO, types.ServerCapabilities())
    resumed = server()
    resumed.resume_initialized("2025-06-18", CLIENT_IMPLEMENTATION, SAMPLING)
    with pytest.raises(ValueError, match=taken):
        resumed.resume_initialized("2025-06-18", CLIENT_IMPLEMENTATION, SAMPLING)
    with pytest.raises(ValueError, match=r"^unsupported protocol version '2026-07-28'$"):
        server().resume_initialized(MODERN, CLIENT_IMPLEMENTATION, SAMPLING)
    with pytest.raises(ValueError, match=r"^unsupported protocol version '2025-03-26'$"):
        server(versions=("2025-06-18",)).resume_initialized("2025-03-26", CLIENT_IMPLEMENTATION, SAMPLING)


# -- number_requests_from: the ids a worker sharing a session starts from -------------------------


def test_requests_are_numbered_from_the_first_id_given() -> None:
    side = server()
    side.assume_ready("2025-06-18")
    side.number_requests_from(1000)
    assert side.next_request_id == 1000
    ident, data = side.start_request(methods.PING, types.RequestParams())
    assert (ident, json.loads(data)["id"]) == (1000, 1000)
    side.number_requests_from(1)
    assert side.start_request(methods.PING, types.RequestParams())[0] == 1
    with pytest.raises(ValueError, match=r"^request ids start from 1$"):
        side.number_requests_from(0)


# -- adopt: a client speaks a stateless version without a handshake -------------------------------


def test_a_client_adopts_a_stateless_version_with_what_the_server_said() -> None:
    side = client()
    side.adopt(MODERN, SERVER_INFO, TOOLS, "be brief")
    assert (side.phase, side.protocol_version) == (Phase.READY, MODERN)
    assert (side.peer.info, side.peer.capabilities, side.peer.instructions) == (
        SERVER_INFO,
        TOOLS,
        "be brief",
    )
    with pytest.raises(ValueError, match=r"^only a client adopts a stateless version$"):
        server().adopt(MODERN, None, TOOLS)
    with pytest.raises(
        ValueError, match=r"^not a stateless protocol version this client speaks: '2025-06-18'$"
    ):
        client().adopt("2025-06-18", None, TOOLS)


# -- fresh: a copy with the state and without the traffic -----------------------------------------


def test_a_fresh_copy_keeps_the_configuration() -> None:
    hints = {"tools/list": b'"ttlMs":60000,"cacheScope":"private"'}
    side = server(
        instructions="be brief",
        versions=("2025-06-18", "2025-03-26"),
        cache_hints=hints,
        raw_params=frozenset({"tools/call"}),
    )
    side.assume_ready("2025-06-18")
    side.number_requests_from(500)
    side.start_request(methods.PING, types.RequestParams())
    copy = side.fresh()
    assert (copy.role, copy.info, copy.capabilities, copy.instructions) == (
        "server",
        SERVER_INFO,
        TOOLS,
        "be brief",
    )
    assert (copy.versions, copy.cache_hints, copy.delivery, copy.modern) == (
        ("2025-06-18", "2025-03-26"),
        hints,
        side.delivery,
        False,
    )
    assert copy.raw_params == frozenset({"tools/call"})
    # Nothing pending and no peer known; ids from 1.
    assert (copy.peer.info, copy.peer.capabilities, copy.peer.instructions) == (None, None, None)
    assert copy.next_request_id == 1
    ident, _ = copy.start_request(methods.PING, types.RequestParams())
    assert ident == 1 and copy.awaits_response(1) and not side.awaits_response(1)
    # A proxy's copy keeps the params of its raw methods as received.
    (event,) = copy.receive(message(id=1, method="tools/call", params={"name": "t", "arguments": {}}))
    assert isinstance(event, RequestReceived) and type(event.params) is msgspec.Raw


def test_a_fresh_copy_of_a_stateless_server_serves_stateless_requests() -> None:
    side = server(versions=(MODERN,))
    (first,) = side.receive(message(id=1, method="tools/list", params={"_meta": META}))
    assert isinstance(first, RequestReceived) and side.modern
    copy = side.fresh()
    assert copy.modern and copy.versions == (MODERN,)
    (event,) = copy.receive(message(id=1, method="tools/list", params={"_meta": META}))
    assert isinstance(event, RequestReceived) and event.envelope is not None
    data = copy.respond(1, copy.spec_of("tools/list"), types.ListToolsResult(tools=[]))
    assert data is not None
    result = json.loads(data)["result"]
    assert result["_meta"]["io.modelcontextprotocol/serverInfo"] == msgspec.to_builtins(SERVER_INFO)
    # A version the copy does not speak is refused as the original refuses it.
    old = {**META, PROTOCOL_VERSION: "2025-06-18"}
    answer = reply(copy.receive(message(id=2, method="tools/list", params={"_meta": old})))
    assert answer["error"]["data"]["supported"] == [MODERN]
