"""Both sides of an MCP connection as bare state machines, for the sans-io tests: bytes are
carried between them by hand, with no transport and no event loop."""

from __future__ import annotations

import json
from typing import Any

import msgspec

from mcpbind import types
from mcpbind.protocol.connection import (
    Connection,
    Event,
    Phase,
    Reply,
    ResponseReceived,
    SessionReady,
)

SERVER_INFO = types.Implementation(name="test-server", version="1.0")
CLIENT_INFO = types.Implementation(name="test-client", version="2.0")
TOOLS = types.ServerCapabilities(tools=types.ServerCapabilitiesTools())


def server(capabilities: types.ServerCapabilities = TOOLS, **options: Any) -> Connection:
    return Connection("server", SERVER_INFO, capabilities, **options)


def client(capabilities: types.ClientCapabilities | None = None, **options: Any) -> Connection:
    return Connection("client", CLIENT_INFO, capabilities or types.ClientCapabilities(), **options)


def message(**members: Any) -> bytes:
    """A JSON-RPC 2.0 message with ``members`` (``jsonrpc`` first, as peers send it)."""
    return json.dumps({"jsonrpc": "2.0", **members}).encode()


def initialize_request(
    version: str, capabilities: types.ClientCapabilities | None = None, id: int = 1
) -> bytes:
    params = {
        "protocolVersion": version,
        "capabilities": msgspec.to_builtins(capabilities or types.ClientCapabilities()),
        "clientInfo": msgspec.to_builtins(CLIENT_INFO),
    }
    return message(id=id, method="initialize", params=params)


def replies(events: list[Event]) -> list[Any]:
    """The JSON of each :class:`Reply` among ``events``; every event must be one."""
    assert all(isinstance(event, Reply) for event in events), events
    return [json.loads(event.data) for event in events if isinstance(event, Reply)]


def reply(events: list[Event]) -> Any:
    """The JSON of the one event, a :class:`Reply`, whose ``id`` must be the one it answers."""
    assert len(events) == 1, events
    (event,) = events
    assert isinstance(event, Reply), event
    answer = json.loads(event.data)
    assert event.id == answer["id"]
    return answer


def ready_server(
    version: str, capabilities: types.ClientCapabilities | None = None, **options: Any
) -> Connection:
    """A server side through the handshake at ``version``, as a client of ``capabilities`` asked."""
    side = server(**options)
    answer = reply(side.receive(initialize_request(version, capabilities)))
    assert answer["result"]["protocolVersion"] == version
    assert side.receive(message(method="notifications/initialized")) == [SessionReady()]
    assert side.phase is Phase.READY
    return side


def handshake(server_side: Connection, client_side: Connection, version: str) -> types.InitializeResult:
    """Carry the whole handshake between the two sides; the server's answer to initialize."""
    params = types.InitializeRequestParams(
        protocol_version=version, capabilities=client_side.capabilities, client_info=client_side.info
    )
    ident, request = client_side.start_request(types.methods.INITIALIZE, params)
    (answer,) = server_side.receive(request)
    assert isinstance(answer, Reply) and answer.id == ident
    (answered,) = client_side.receive(answer.data)
    assert isinstance(answered, ResponseReceived) and answered.id == ident
    result: types.InitializeResult = answered.result
    assert server_side.receive(client_side.initialized(result)) == [SessionReady()]
    return result
