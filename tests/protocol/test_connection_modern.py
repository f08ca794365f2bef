"""The server side of the connection at MCP 2026-07-28 (stateless), sans-io: each request is
served on what its own ``_meta`` says, the errors a request gets when that is missing or
unsupported, the members every result carries, and the era a connection keeps."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import msgspec
import pytest

from mcpbind import types
from mcpbind.protocol.connection import Connection, RequestReceived
from mcpbind.protocol.envelope import (
    CLIENT_CAPABILITIES,
    CLIENT_INFO,
    LOG_LEVEL,
    PROTOCOL_VERSION,
    SERVER_INFO,
)
from mcpbind.protocol.errors import (
    INVALID_PARAMS,
    INVALID_REQUEST,
    METHOD_NOT_FOUND,
    RESOURCE_NOT_FOUND,
    UNSUPPORTED_PROTOCOL_VERSION,
    McpError,
)
from mcpbind.versions import HANDSHAKE_VERSIONS, SUPPORTED_VERSIONS
from tests.protocol.connections import SERVER_INFO as INFO
from tests.protocol.connections import initialize_request, message, ready_server, reply, server

MODERN = "2026-07-28"
META: dict[str, Any] = {
    PROTOCOL_VERSION: MODERN,
    CLIENT_CAPABILITIES: {"sampling": {}},
    CLIENT_INFO: {"name": "raw", "version": "1"},
}
EXAMPLES = Path(__file__).resolve().parents[3] / "shared" / "schema" / MODERN / "examples"
# The requests a client sends, as the specification's examples spell them.
CLIENT_REQUESTS = [
    "CallToolRequest",
    "CompleteRequest",
    "DiscoverRequest",
    "GetPromptRequest",
    "ListPromptsRequest",
    "ListResourceTemplatesRequest",
    "ListResourcesRequest",
    "ListToolsRequest",
    "ReadResourceRequest",
    "SubscriptionsListenRequest",
]


def request(ident: int, method: str, params: dict[str, Any] | None = None, meta: Any = META) -> bytes:
    body = dict(params or {})
    if meta is not None:
        body["_meta"] = meta
    return message(id=ident, method=method, params=body)


def received(events: list[Any]) -> RequestReceived:
    [event] = events
    assert isinstance(event, RequestReceived), event
    return event


def examples() -> list[Path]:
    found = sorted(path for name in CLIENT_REQUESTS for path in (EXAMPLES / name).glob("*.json"))
    return found


@pytest.mark.skipif(not EXAMPLES.is_dir(), reason="the specification's examples are in ../shared/schema")
@pytest.mark.parametrize("path", examples(), ids=lambda path: f"{path.parent.name}/{path.stem}")
def test_every_request_example_of_the_specification_is_served_on_its_own(path: Path) -> None:
    side = server()
    data = path.read_bytes()
    event = received(side.receive(data))
    sent = json.loads(data)
    assert event.id == sent["id"] and event.method == sent["method"]
    assert event.envelope is not None and event.envelope.version == MODERN
    assert side.modern


def test_the_envelope_is_read_from_the_requests_meta() -> None:
    side = server()
    event = received(side.receive(request(1, "tools/list", meta={**META, LOG_LEVEL: "warning"})))
    envelope = event.envelope
    assert envelope is not None
    assert envelope.client_capabilities == types.ClientCapabilities(
        sampling=types.ClientCapabilitiesSampling()
    )
    assert envelope.client_info == types.Implementation(name="raw", version="1")
    assert envelope.log_level == "warning"
    assert envelope.input_responses is None and envelope.request_state is None
    assert side.envelope_of(1) is envelope
    # Nothing is kept: the next request says it all again, differently.
    event = received(
        side.receive(request(2, "tools/list", meta={PROTOCOL_VERSION: MODERN, CLIENT_CAPABILITIES: {}}))
    )
    assert event.envelope is not None
    assert event.envelope.client_capabilities == types.ClientCapabilities()
    assert event.envelope.client_info is None and event.envelope.log_level is None


def test_a_retry_brings_its_answers_and_state() -> None:
    side = server()
    params = {"name": "ask", "inputResponses": {"elicitation-1": {"action": "decline"}}, "requestState": "s1"}
    event = received(side.receive(request(3, "tools/call", params)))
    assert event.envelope is not None
    assert event.envelope.input_responses == {"elicitation-1": {"action": "decline"}}
    assert event.envelope.request_state == "s1"
    assert event.params.name == "ask"


@pytest.mark.parametrize(
    ("params", "responses", "state"),
    [
        ({"inputResponses": {"e": {"action": "cancel"}}}, {"e": {"action": "cancel"}}, None),
        ({"requestState": "s2"}, None, "s2"),
        ({"arguments": {"note": "requestState"}}, None, None),  # the word alone is no retry
    ],
    ids=["answers-only", "state-only", "neither"],
)
def test_a_retry_may_bring_its_answers_or_its_state_alone(
    params: dict[str, Any], responses: Any, state: Any
) -> None:
    event = received(server().receive(request(3, "tools/call", {"name": "ask", **params})))
    assert event.envelope is not None
    assert (event.envelope.input_responses, event.envelope.request_state) == (responses, state)


@pytest.mark.parametrize(
    ("meta", "says"),
    [
        ({CLIENT_CAPABILITIES: {}}, "protocolVersion']` is missing"),
        ({PROTOCOL_VERSION: 20260728, CLIENT_CAPABILITIES: {}}, "must be a string"),
        ({PROTOCOL_VERSION: MODERN}, "clientCapabilities']` is missing"),
        ({PROTOCOL_VERSION: MODERN, CLIENT_CAPABILITIES: {"sampling": 3}}, "clientCapabilities"),
        ({**META, CLIENT_INFO: {"name": "no version"}}, "clientInfo"),
        ({**META, LOG_LEVEL: "loud"}, "logLevel"),
        ("not an object", "_meta"),
    ],
)
def test_a_malformed_envelope_is_invalid_params(meta: Any, says: str) -> None:
    side = server()
    answer = reply(side.receive(request(4, "server/discover", meta=meta)))
    assert answer["error"]["code"] == INVALID_PARAMS
    assert says in answer["error"]["message"]


def test_an_unknown_version_gets_the_supported_list() -> None:
    answer = reply(server().receive(request(5, "tools/list", meta={**META, PROTOCOL_VERSION: "2099-01-01"})))
    assert answer["error"]["code"] == UNSUPPORTED_PROTOCOL_VERSION
    assert answer["error"]["data"] == {"supported": list(SUPPORTED_VERSIONS), "requested": "2099-01-01"}


def test_a_server_without_the_stateless_versions_says_which_it_has() -> None:
    side = server(versions=HANDSHAKE_VERSIONS)
    answer = reply(side.receive(request(6, "server/discover")))
    assert answer["error"]["code"] == UNSUPPORTED_PROTOCOL_VERSION
    assert answer["error"]["data"]["supported"] == list(HANDSHAKE_VERSIONS)
    # ... and still has sessions for the handshake versions.
    assert (
        reply(side.receive(initialize_request(HANDSHAKE_VERSIONS[0])))["result"]["protocolVersion"]
        == (HANDSHAKE_VERSIONS[0])
    )


@pytest.mark.parametrize(
    "method", ["ping", "logging/setLevel", "resources/subscribe", "resources/unsubscribe"]
)
def test_the_methods_the_stateless_protocol_dropped_are_not_found(method: str) -> None:
    params = {"level": "info"} if method == "logging/setLevel" else {"uri": "test://x"}
    answer = reply(server().receive(request(7, method, {} if method == "ping" else params)))
    assert answer["error"]["code"] == METHOD_NOT_FOUND


def test_a_connection_that_served_a_stateless_request_takes_no_handshake() -> None:
    side = server()
    received(side.receive(request(1, "server/discover")))
    answer = reply(side.receive(initialize_request(HANDSHAKE_VERSIONS[0], id=2)))
    assert answer["error"]["code"] == UNSUPPORTED_PROTOCOL_VERSION
    assert MODERN in answer["error"]["data"]["supported"]
    # A request without the envelope is now a malformed stateless one.
    assert reply(side.receive(request(3, "tools/list", meta=None)))["error"]["code"] == INVALID_PARAMS


def test_a_session_knows_no_stateless_methods() -> None:
    side = ready_server(HANDSHAKE_VERSIONS[0])
    for ident, method in enumerate(["server/discover", "subscriptions/listen"], start=10):
        answer = reply(side.receive(request(ident, method, {"notifications": {}})))
        assert (answer["id"], answer["error"]) == (
            ident,
            {
                "code": METHOD_NOT_FOUND,
                "message": f"Method not found: {method} is not part of protocol version {HANDSHAKE_VERSIONS[0]}",
            },
        )
    # A session's requests are its own even with stateless _meta keys in them.
    event = received(side.receive(request(12, "tools/list")))
    assert event.envelope is None


def test_a_request_without_meta_on_a_new_connection_still_needs_the_handshake() -> None:
    answer = reply(server().receive(request(1, "tools/list", meta=None)))
    assert "before initialization" in answer["error"]["message"]


def result_of(side: Connection, ident: int, method: str, result: Any) -> Any:
    data = side.respond(ident, side.spec_of(method), result)
    assert data is not None
    return json.loads(data)["result"]


def test_results_carry_their_type_and_the_servers_identity() -> None:
    side = server()
    received(side.receive(request(1, "tools/call", {"name": "t"})))
    result = result_of(side, 1, "tools/call", types.CallToolResult(content=[types.TextContent(text="hi")]))
    assert result == {
        "resultType": "complete",
        "_meta": {SERVER_INFO: {"name": INFO.name, "version": INFO.version}},
        "content": [{"type": "text", "text": "hi"}],
    }
    # A result's own _meta is kept beside the identity.
    received(side.receive(request(2, "tools/call", {"name": "t"})))
    own = types.CallToolResult(content=[], meta={"com.example/trace": "abc"})
    assert result_of(side, 2, "tools/call", own)["_meta"] == {
        "com.example/trace": "abc",
        SERVER_INFO: {"name": INFO.name, "version": INFO.version},
    }


def test_cacheable_results_carry_the_hints_given() -> None:
    hints = {"tools/list": b'"ttlMs":60000,"cacheScope":"public"'}
    side = server(cache_hints=hints)
    received(side.receive(request(1, "tools/list")))
    result = result_of(side, 1, "tools/list", types.ListToolsResult(tools=[]))
    assert (result["ttlMs"], result["cacheScope"], result["resultType"]) == (60000, "public", "complete")
    received(side.receive(request(2, "prompts/list")))
    assert "ttlMs" not in result_of(side, 2, "prompts/list", types.ListPromptsResult(prompts=[]))


def test_session_results_are_unchanged() -> None:
    side = ready_server(HANDSHAKE_VERSIONS[0], cache_hints={"tools/list": b'"ttlMs":1,"cacheScope":"public"'})
    received(side.receive(request(1, "tools/list", meta=None)))
    assert result_of(side, 1, "tools/list", types.ListToolsResult(tools=[])) == {"tools": []}


def test_resource_not_found_is_invalid_params_at_the_stateless_version_only() -> None:
    missing = McpError(RESOURCE_NOT_FOUND, "Resource not found: test://x", {"uri": "test://x"})
    modern = server()
    received(modern.receive(request(1, "resources/read", {"uri": "test://x"})))
    data = modern.respond_error(1, missing)
    assert data is not None and json.loads(data)["error"]["code"] == INVALID_PARAMS
    session = ready_server(HANDSHAKE_VERSIONS[0])
    received(session.receive(request(1, "resources/read", {"uri": "test://x"}, meta=None)))
    data = session.respond_error(1, missing)
    assert data is not None and json.loads(data)["error"]["code"] == RESOURCE_NOT_FOUND


def test_an_answered_stateless_request_frees_its_id() -> None:
    side = server()
    for fails in (True, False):
        received(side.receive(request(1, "tools/list")))
        assert side.envelope_of(1) is not None
        if fails:
            answer = side.respond_error(1, McpError(INVALID_PARAMS, "no"))
        else:
            answer = side.respond(1, side.spec_of("tools/list"), types.ListToolsResult(tools=[]))
        assert answer is not None
        assert side.envelope_of(1) is None
    received(side.receive(request(1, "tools/list")))
    # A request refused for its envelope never took the id.
    refused = reply(side.receive(request(2, "tools/list", meta={PROTOCOL_VERSION: "1999-01-01"})))
    assert refused["error"]["code"] == UNSUPPORTED_PROTOCOL_VERSION
    received(side.receive(request(2, "tools/list")))


def test_the_result_of_a_retry_is_never_cacheable() -> None:
    # It depends on the answers the retry brought, which are no part of a cache key.
    side = server(cache_hints={"resources/read": b'"ttlMs":60000,"cacheScope":"public"'})
    contents = types.ReadResourceResult(contents=[])
    received(side.receive(request(1, "resources/read", {"uri": "test://x"})))
    first = result_of(side, 1, "resources/read", contents)
    assert (first["ttlMs"], first["cacheScope"]) == (60000, "public")
    received(side.receive(request(2, "resources/read", {"uri": "test://x", "requestState": "s"})))
    retried = result_of(side, 2, "resources/read", contents)
    assert (retried["ttlMs"], retried["cacheScope"]) == (0, "private")
    # A method without hints gets none, retried or not.
    received(side.receive(request(3, "prompts/get", {"name": "p", "requestState": "s"})))
    assert "ttlMs" not in result_of(side, 3, "prompts/get", types.GetPromptResult(messages=[]))


def test_only_the_multi_round_trip_methods_are_retries() -> None:
    # requestState means nothing to tools/list: an unknown member, ignored; the result stays
    # cacheable.
    side = server(cache_hints={"tools/list": b'"ttlMs":60000,"cacheScope":"public"'})
    event = received(side.receive(request(1, "tools/list", {"requestState": "s", "inputResponses": {}})))
    assert event.envelope is not None
    assert (event.envelope.request_state, event.envelope.input_responses) == (None, None)
    assert result_of(side, 1, "tools/list", types.ListToolsResult(tools=[]))["ttlMs"] == 60000


# -- refusals: each answers the id of the request it refuses, with the exact error ----------------


def test_an_id_in_flight_is_refused_to_a_second_stateless_request() -> None:
    side = server()
    received(side.receive(request(8, "tools/list")))
    answer = reply(side.receive(request(8, "tools/list")))
    assert (answer["id"], answer["error"]) == (
        8,
        {"code": INVALID_REQUEST, "message": "Request id 8 is already in use"},
    )


def test_initialize_on_a_stateless_connection_names_the_versions() -> None:
    side = server()
    received(side.receive(request(1, "server/discover")))
    answer = reply(side.receive(initialize_request("2025-06-18", id=9)))
    assert answer["id"] == 9
    assert answer["error"] == {
        "code": UNSUPPORTED_PROTOCOL_VERSION,
        "message": "This connection serves the stateless protocol; initialize is not accepted on it",
        "data": {"supported": list(SUPPORTED_VERSIONS), "requested": "2025-06-18"},
    }


def test_initialize_with_the_stateless_envelope_is_not_found() -> None:
    # On a new connection as on one that already served a stateless request.
    side = server()
    for ident in (10, 11):
        params = msgspec.to_builtins(
            types.InitializeRequestParams(
                protocol_version="2025-06-18",
                capabilities=types.ClientCapabilities(),
                client_info=types.Implementation(name="c", version="1"),
            )
        )
        answer = reply(side.receive(request(ident, "initialize", params)))
        assert (answer["id"], answer["error"]) == (
            ident,
            {
                "code": METHOD_NOT_FOUND,
                "message": f"Method not found: initialize is not part of protocol version {MODERN}",
            },
        )
        received(side.receive(request(ident + 10, "tools/list")))


def test_a_dropped_method_and_a_bad_envelope_answer_the_request() -> None:
    side = server()
    answer = reply(side.receive(request(12, "logging/setLevel", {"level": "info"})))
    assert (answer["id"], answer["error"]) == (
        12,
        {
            "code": METHOD_NOT_FOUND,
            "message": "Method not found: logging/setLevel is not part of the stateless protocol",
        },
    )
    answer = reply(side.receive(request(13, "tools/list", meta={**META, PROTOCOL_VERSION: "2099-01-01"})))
    assert (answer["id"], answer["error"]["code"]) == (13, UNSUPPORTED_PROTOCOL_VERSION)


@pytest.mark.parametrize("params", [{"requestState": 5}, {"inputResponses": ["not", "an", "object"]}])
def test_a_malformed_retry_is_invalid_params(params: dict[str, Any]) -> None:
    side = server()
    answer = reply(side.receive(request(14, "tools/call", {"name": "ask", **params})))
    assert answer["id"] == 14
    assert answer["error"]["code"] == INVALID_PARAMS
    assert answer["error"]["message"].startswith("Invalid params: ")
    # The id was not taken.
    received(side.receive(request(14, "tools/list")))


def test_a_stateless_result_answers_its_request() -> None:
    side = server()
    received(side.receive(request(15, "tools/list")))
    data = side.respond(15, side.spec_of("tools/list"), types.ListToolsResult(tools=[]))
    assert data is not None and json.loads(data)["id"] == 15


def test_a_proxy_keeps_the_params_of_a_stateless_request_as_received() -> None:
    side = server(raw_params=frozenset({"tools/call"}))
    event = received(side.receive(request(16, "tools/call", {"name": "t", "arguments": {"a": 1}})))
    assert type(event.params) is msgspec.Raw
    assert json.loads(bytes(event.params))["arguments"] == {"a": 1}
