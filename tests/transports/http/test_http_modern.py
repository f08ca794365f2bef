"""MCP 2026-07-28 over the Streamable HTTP app, next to the 2025 sessions on the same endpoint:
no session, headers checked against the body (-32020), error statuses by code, JSON or SSE
answers (without event ids), GET/DELETE 405, long streams flushed as they come and cancelled by
the client going away, and any app instance answering any request."""

from __future__ import annotations

import base64
import inspect
import secrets
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Any

import anyio
import httpx
import msgspec
import pytest

from mcpbind.protocol.envelope import CLIENT_CAPABILITIES, CLIENT_INFO, LOG_LEVEL, PROTOCOL_VERSION
from mcpbind.protocol.errors import INVALID_PARAMS, McpError
from mcpbind.runtime.context import RequestContext
from mcpbind.runtime.middleware import CallNext, IncomingRequest, Middleware
from mcpbind.schema import v2025_11_25 as types
from mcpbind.server.elicitation import elicit_form
from mcpbind.server.server import Server
from mcpbind.transports.http.header_values import decode_header_value, encode_header_value
from mcpbind.transports.http.param_headers import param_headers
from mcpbind.transports.http.server import StreamableHTTPApp
from mcpbind.versions import SUPPORTED_VERSIONS
from tests import http_server_helpers as helpers
from tests.http_server_helpers import ACCEPT_BOTH, Probe, make_server

pytestmark = pytest.mark.anyio

MODERN = "2026-07-28"
META = {PROTOCOL_VERSION: MODERN, CLIENT_CAPABILITIES: {}, CLIENT_INFO: {"name": "raw", "version": "1"}}
NAMED = {"tools/call": "name", "prompts/get": "name", "resources/read": "uri"}

SQL_SCHEMA = {
    "type": "object",
    "properties": {
        "region": {"type": "string", "x-mcp-header": "Region"},
        "limit": {"type": "integer", "x-mcp-header": "Limit"},
        "dry": {"type": "boolean", "x-mcp-header": "Dry"},
        "where": {"type": "object", "properties": {"tenant": {"type": "string", "x-mcp-header": "Tenant"}}},
        "query": {"type": "string"},
    },
    "required": ["region", "query"],
}


def modern_server(probe: Probe | None = None) -> Server:
    """make_server's tools, plus tools with x-mcp-header arguments, a non-ASCII name, a prompt,
    and a stand-in ``subscriptions/listen`` (its notifications tied to the request)."""
    probe = probe or Probe()
    server = make_server(probe)

    @server.tool(input_schema=SQL_SCHEMA)
    async def sql(
        region: str, query: str, limit: int | None = None, dry: bool | None = None, where: Any = None
    ) -> str:
        return f"{region}:{query}"

    @server.tool(
        name="broken",
        input_schema={"type": "object", "properties": {"x": {"type": "number", "x-mcp-header": "X"}}},
    )
    async def broken(x: float = 0) -> str:
        return "unchecked"

    @server.tool(name="wetter-überall")
    async def weather() -> str:
        return "sunny"

    @server.prompt()
    def greet(name: str) -> str:
        return f"Hello {name}"

    @server.tool()
    async def nap(fail: bool = False) -> str:
        """Waits a little, then answers (or fails with -32602)."""
        await anyio.sleep(0.01)
        if fail:
            raise McpError(INVALID_PARAMS, "Invalid params: asked to fail")
        return "rested"

    @server.tool()
    async def tick(ctx: RequestContext) -> str:
        """One progress notification, then waits for the test."""
        await ctx.report_progress(1, 2, "first")
        await probe.hold()
        return "ticked"

    async def listen(params: Any, ctx: RequestContext) -> Any:
        for _ in range(2):
            await ctx.notify(types.methods.NOTIFICATIONS_TOOLS_LIST_CHANGED, types.NotificationParams())
        await probe.hold()
        return types.Result()

    server.request_handlers["subscriptions/listen"] = listen
    return server


def rpc(
    ident: int | str | None, method: str, params: dict[str, Any] | None = None, meta: Any = META
) -> dict[str, Any]:
    message: dict[str, Any] = {"jsonrpc": "2.0", "method": method}
    if ident is not None:
        message["id"] = ident
    params = dict(params or {})
    if meta is not None:
        params["_meta"] = {**params.get("_meta", {}), **meta}
    message["params"] = params
    return message


def call(ident: int, tool: str, arguments: dict[str, Any] | None = None, **meta: Any) -> dict[str, Any]:
    return rpc(ident, "tools/call", {"name": tool, "arguments": arguments or {}, "_meta": meta})


def heads(message: dict[str, Any], **extra: str | None) -> dict[str, str]:
    """What a conforming client sends with ``message``; ``extra`` overrides (``None`` drops)."""
    out = {
        "content-type": "application/json",
        "accept": ACCEPT_BOTH,
        "mcp-protocol-version": MODERN,
        "mcp-method": message["method"],
    }
    field = NAMED.get(message["method"])
    if field is not None:
        out["mcp-name"] = encode_header_value(message["params"][field])
    for name, value in extra.items():
        key = name.replace("_", "-")
        if value is None:
            out.pop(key, None)
        else:
            out[key] = value
    return out


@asynccontextmanager
async def in_process(app: StreamableHTTPApp) -> AsyncIterator[httpx.AsyncClient]:
    async with (
        app.run(),
        httpx.AsyncClient(transport=httpx.ASGITransport(app=app), base_url="http://127.0.0.1") as client,
    ):
        yield client


def answers(response: httpx.Response) -> list[dict[str, Any]]:
    kind = response.headers.get("content-type", "")
    if kind.startswith("text/event-stream"):
        return helpers.messages(helpers.sse_events(response.text))
    return [response.json()] if response.content else []


async def send(
    client: httpx.AsyncClient, message: dict[str, Any], headers: dict[str, str] | None = None
) -> tuple[httpx.Response, list[dict[str, Any]]]:
    response = await client.post(
        "/mcp", json=message, headers=headers if headers is not None else heads(message)
    )
    return response, answers(response)


async def test_tools_call_json_without_a_session(anyio_backend: str) -> None:
    async with in_process(StreamableHTTPApp(modern_server())) as client:
        response, [answer] = await send(client, call(1, "echo", {"text": "hi"}))
        assert response.status_code == 200
        assert response.headers["content-type"] == "application/json"
        assert "mcp-session-id" not in response.headers
        assert answer["id"] == 1
        assert answer["result"]["content"] == [{"type": "text", "text": "hi"}]
        assert answer["result"]["resultType"] == "complete"
        # A session id sent along is ignored, and none comes back.
        message = call(2, "echo", {"text": "again"})
        response, [answer] = await send(client, message, heads(message, mcp_session_id="nonexistent"))
        assert response.status_code == 200 and "mcp-session-id" not in response.headers
        assert answer["result"]["content"][0]["text"] == "again"


async def test_progress_makes_an_sse_answer_without_event_ids(anyio_backend: str) -> None:
    async with in_process(StreamableHTTPApp(modern_server())) as client:
        response, messages = await send(client, call(1, "progress", {"steps": 2}, progressToken="p"))
        assert response.status_code == 200
        assert response.headers["content-type"] == "text/event-stream"
        assert "mcp-session-id" not in response.headers
        assert [m.get("method") for m in messages] == ["notifications/progress"] * 2 + [None]
        assert messages[-1]["result"]["content"][0]["text"] == "done 2"
        events = helpers.sse_events(response.text)
        assert all("id" not in event for event in events)  # nothing to resume from


async def test_log_messages_only_at_the_requested_level(anyio_backend: str) -> None:
    async with in_process(StreamableHTTPApp(modern_server())) as client:
        _, quiet = await send(client, call(1, "chatter", {"count": 2}))
        assert [m.get("method") for m in quiet] == [None]  # no logLevel in _meta: no log messages
        _, chatty = await send(client, call(2, "chatter", {"count": 2}, **{LOG_LEVEL: "info"}))
        assert [m.get("method") for m in chatty] == ["notifications/message"] * 2 + [None]


async def test_json_response_mode_answers_json_and_declares_no_logging(anyio_backend: str) -> None:
    async with in_process(StreamableHTTPApp(modern_server(), json_response=True)) as client:
        message = call(1, "progress", {"steps": 2}, progressToken="p")
        response, [answer] = await send(client, message, heads(message, accept="application/json"))
        assert response.headers["content-type"] == "application/json"
        assert answer["result"]["content"][0]["text"] == "done 2"
        _, [discovered] = await send(client, rpc(2, "server/discover"))
        capabilities = discovered["result"]["capabilities"]
        assert "logging" not in capabilities
        assert capabilities["tools"]["listChanged"] is True  # delivered by subscriptions/listen


async def test_discover(anyio_backend: str) -> None:
    async with in_process(StreamableHTTPApp(modern_server())) as client:
        response, [answer] = await send(client, rpc(1, "server/discover"))
        assert response.status_code == 200
        result = answer["result"]
        assert result["supportedVersions"][0] == MODERN and "2025-11-25" in result["supportedVersions"]
        assert result["capabilities"]["logging"] == {}  # log messages reach the client on SSE answers
        assert result["capabilities"]["tools"]["listChanged"] is True
        assert result["capabilities"]["resources"]["subscribe"] is True


@pytest.mark.parametrize(
    ("case", "message", "extra"),
    [
        ("no Mcp-Method", call(1, "echo", {"text": "x"}), {"mcp_method": None}),
        ("other Mcp-Method", call(1, "echo", {"text": "x"}), {"mcp_method": "tools/list"}),
        ("no Mcp-Name", call(1, "echo", {"text": "x"}), {"mcp_name": None}),
        ("other Mcp-Name", call(1, "echo", {"text": "x"}), {"mcp_name": "progress"}),
        ("case of Mcp-Name", call(1, "echo", {"text": "x"}), {"mcp_name": "ECHO"}),
        ("bad Base64 Mcp-Name", call(1, "echo", {"text": "x"}), {"mcp_name": "=?base64?not base64?="}),
        (
            "prompt name",
            rpc(1, "prompts/get", {"name": "greet", "arguments": {"name": "a"}}),
            {"mcp_name": "x"},
        ),
        ("resource uri", rpc(1, "resources/read", {"uri": "test://hello"}), {"mcp_name": "test://other"}),
        ("no resource uri header", rpc(1, "resources/read", {"uri": "test://hello"}), {"mcp_name": None}),
        (
            "version header vs _meta",
            rpc(1, "server/discover", meta={**META, PROTOCOL_VERSION: "2025-11-25"}),
            {},
        ),
    ],
)
async def test_headers_that_differ_from_the_body_are_refused(
    anyio_backend: str, case: str, message: dict[str, Any], extra: dict[str, str | None]
) -> None:
    probe = Probe()
    async with in_process(StreamableHTTPApp(modern_server(probe))) as client:
        response, [answer] = await send(client, message, heads(message, **extra))
        assert response.status_code == 400, case
        assert response.headers["content-type"] == "application/json"
        assert answer["id"] == 1
        assert answer["error"]["code"] == -32020, answer


async def test_a_repeated_routing_header_is_refused(anyio_backend: str) -> None:
    async with in_process(StreamableHTTPApp(modern_server())) as client:
        message = call(1, "echo", {"text": "x"})
        raw = [(k, v) for k, v in heads(message).items()] + [("mcp-method", "tools/call")]
        response = await client.post("/mcp", json=message, headers=raw)
        assert response.status_code == 400
        assert response.json()["error"]["code"] == -32020
        assert "more than once" in response.json()["error"]["message"]


async def test_names_outside_ascii_travel_in_base64(anyio_backend: str) -> None:
    async with in_process(StreamableHTTPApp(modern_server())) as client:
        message = call(1, "wetter-überall")
        headers = heads(message)
        assert headers["mcp-name"].startswith("=?base64?")
        response, [answer] = await send(client, message, headers)
        assert response.status_code == 200
        assert answer["result"]["content"][0]["text"] == "sunny"
        # The raw name is no valid header value, Base64 of another name does not match.
        other = "=?base64?" + base64.b64encode(b"wetter-anderswo").decode() + "?="
        response, [answer] = await send(client, message, heads(message, mcp_name=other))
        assert (response.status_code, answer["error"]["code"]) == (400, -32020)


async def test_prompts_and_resources_with_their_names(anyio_backend: str) -> None:
    async with in_process(StreamableHTTPApp(modern_server())) as client:
        response, [answer] = await send(
            client, rpc(1, "prompts/get", {"name": "greet", "arguments": {"name": "Ada"}})
        )
        assert response.status_code == 200
        assert answer["result"]["messages"][0]["content"]["text"] == "Hello Ada"
        response, [answer] = await send(client, rpc(2, "resources/read", {"uri": "test://hello"}))
        assert response.status_code == 200
        assert answer["result"]["contents"][0]["text"] == "hello"


async def test_error_statuses(anyio_backend: str) -> None:
    async with in_process(StreamableHTTPApp(modern_server())) as client:
        # Without the protocol version in _meta: -32602, 400.
        message = rpc(1, "tools/list", meta=None)
        response, [answer] = await send(client, message)
        assert (response.status_code, answer["error"]["code"]) == (400, -32602)
        message = rpc(2, "tools/list", meta={PROTOCOL_VERSION: MODERN})  # no client capabilities
        response, [answer] = await send(client, message)
        assert (response.status_code, answer["error"]["code"], answer["id"]) == (400, -32602, 2)
        # An unknown method: 404 with -32601 (not a bare 404: the body says it is MCP's).
        response, [answer] = await send(client, rpc(3, "tools/frobnicate"))
        assert (response.status_code, answer["error"]["code"]) == (404, -32601)
        # A handler's error after it waited: still JSON with its status.
        response, [answer] = await send(client, call(4, "nap", {"fail": True}))
        assert (response.status_code, answer["error"]["code"]) == (400, -32602)
        response, [answer] = await send(client, call(6, "nap"))
        assert (response.status_code, response.headers["content-type"]) == (200, "application/json")
        assert answer["result"]["content"][0]["text"] == "rested"
        # A resource that is not there: -32602, 400.
        response, [answer] = await send(client, rpc(5, "resources/read", {"uri": "test://absent"}))
        assert (response.status_code, answer["error"]["code"]) == (400, -32602)


async def test_an_unknown_version_gets_32022_and_the_supported_list(anyio_backend: str) -> None:
    async with in_process(StreamableHTTPApp(modern_server())) as client:
        message = rpc(7, "server/discover", meta={**META, PROTOCOL_VERSION: "2099-01-01"})
        response, [answer] = await send(client, message, heads(message, mcp_protocol_version="2099-01-01"))
        assert response.status_code == 400
        assert answer["id"] == 7
        assert answer["error"]["code"] == -32022
        assert answer["error"]["data"]["requested"] == "2099-01-01"
        assert MODERN in answer["error"]["data"]["supported"]


async def test_a_server_without_2026_refuses_the_probe_with_its_versions(anyio_backend: str) -> None:
    server = Server("old", "1", versions=tuple(v for v in SUPPORTED_VERSIONS if v != MODERN))

    @server.tool()
    async def echo(text: str) -> str:
        return text

    async with in_process(StreamableHTTPApp(server)) as client:
        response, [answer] = await send(client, rpc(1, "server/discover"))
        assert (response.status_code, answer["error"]["code"]) == (400, -32022)
        assert MODERN not in answer["error"]["data"]["supported"]  # the client falls back to initialize
        session_id = await helpers.open_session(client, "/mcp")
        assert session_id


async def test_notifications_get_202_and_responses_400(anyio_backend: str) -> None:
    async with in_process(StreamableHTTPApp(modern_server())) as client:
        note = rpc(None, "notifications/cancelled", {"requestId": 1})
        response = await client.post("/mcp", json=note, headers=heads(note))
        assert response.status_code == 202 and not response.content
        reply = {"jsonrpc": "2.0", "id": 1, "result": {}}
        response = await client.post("/mcp", json=reply, headers=heads({"method": "x", "params": {}}))
        assert response.status_code == 400
        assert response.json()["error"]["code"] == -32600


async def test_get_and_delete_get_405_and_2025_sessions_go_on(anyio_backend: str) -> None:
    async with in_process(StreamableHTTPApp(modern_server())) as client:
        for method in ("GET", "DELETE"):
            response = await client.request(
                method, "/mcp", headers={"accept": "text/event-stream", "mcp-protocol-version": MODERN}
            )
            assert response.status_code == 405
            assert response.headers["allow"] == "POST"
        # A 2025-11-25 client on the same endpoint: a session, as before.
        session_id = await helpers.open_session(client, "/mcp")
        response, messages = await helpers.post(
            client, "/mcp", helpers.call(1, "echo", {"text": "old"}), session_id
        )
        assert response.status_code == 200
        assert messages[-1]["result"]["content"][0]["text"] == "old"
        assert "resultType" not in messages[-1]["result"]
        response = await client.delete("/mcp", headers=helpers.headers(session_id))
        assert response.status_code == 204


async def test_stateless_mode_serves_2026_too(anyio_backend: str) -> None:
    async with in_process(StreamableHTTPApp(modern_server(), stateless=True, json_response=True)) as client:
        message = call(1, "echo", {"text": "hi"})
        response, [answer] = await send(client, message, heads(message, accept="application/json"))
        assert response.status_code == 200
        assert answer["result"]["resultType"] == "complete"


async def test_any_app_instance_answers_any_request(anyio_backend: str) -> None:
    """Two instances (two workers, two processes behind a load balancer) share nothing; a
    client's requests alternate between them."""
    async with (
        in_process(StreamableHTTPApp(modern_server())) as first,
        in_process(StreamableHTTPApp(modern_server())) as second,
    ):
        messages = [
            rpc(1, "server/discover"),
            rpc(2, "tools/list"),
            call(3, "echo", {"text": "a"}),
            call(4, "progress", {"steps": 1}, progressToken=1),
            rpc(5, "resources/read", {"uri": "test://hello"}),
            call(6, "echo", {"text": "b"}),
        ]
        for index, message in enumerate(messages):
            client = (first, second)[index % 2]
            response, answered = await send(client, message)
            assert response.status_code == 200, response.text
            assert answered[-1]["id"] == message["id"]
            assert "result" in answered[-1]


class Name(msgspec.Struct):
    name: str


def asking_worker(key: bytes) -> Server:
    """A worker of a fleet sharing the key that signs multi round-trip request states."""
    options: dict[str, Any] = {"request_state_key": key}
    server = Server("worker", "1", **options)

    @server.tool()
    async def who(ctx: RequestContext) -> str:
        outcome = await elicit_form(ctx, "Your name?", Name)
        return "nobody" if outcome.value is None else f"hello {outcome.value.name}"

    return server


@pytest.mark.skipif(
    "request_state_key" not in inspect.signature(Server.__init__).parameters,
    reason="multi round-trip requests (Server(request_state_key=...)) are not in this tree",
)
async def test_a_multi_round_trip_retry_answered_by_another_app_instance(anyio_backend: str) -> None:
    key = secrets.token_bytes(32)
    capabilities = {**META, CLIENT_CAPABILITIES: {"elicitation": {"form": {}}}}
    async with (
        in_process(StreamableHTTPApp(asking_worker(key))) as first,
        in_process(StreamableHTTPApp(asking_worker(key))) as second,
    ):
        message = rpc(1, "tools/call", {"name": "who", "arguments": {}}, meta=capabilities)
        response, [asked] = await send(first, message)
        assert response.status_code == 200
        result = asked["result"]
        assert result["resultType"] == "input_required"
        [question] = result["inputRequests"]
        retry = rpc(
            2,
            "tools/call",
            {
                "name": "who",
                "arguments": {},
                "inputResponses": {question: {"action": "accept", "content": {"name": "Ada"}}},
                "requestState": result["requestState"],
            },
            meta=capabilities,
        )
        response, [answer] = await send(second, retry)
        assert response.status_code == 200
        assert answer["result"]["resultType"] == "complete"
        assert answer["result"]["content"][0]["text"] == "hello Ada"


# -- x-mcp-header --------------------------------------------------------------------------


def sql_call(arguments: dict[str, Any]) -> dict[str, Any]:
    return call(1, "sql", arguments)


@pytest.mark.parametrize(
    ("arguments", "params", "ok"),
    [
        ({"region": "us-west1", "query": "q"}, {"Region": "us-west1"}, True),
        ({"region": "us-west1", "query": "q"}, {}, False),  # the argument is there, its header not
        ({"region": "us-west1", "query": "q"}, {"Region": "eu-west1"}, False),
        (
            {"region": "us-west1", "query": "q"},
            {"Region": "us-west1", "Limit": "3"},
            False,
        ),  # no such argument
        ({"region": "Grüße", "query": "q"}, {"Region": encode_header_value("Grüße")}, True),
        ({"region": " padded ", "query": "q"}, {"Region": encode_header_value(" padded ")}, True),
        ({"region": "us", "query": "q", "limit": 42}, {"Region": "us", "Limit": "42"}, True),
        ({"region": "us", "query": "q", "limit": 42}, {"Region": "us", "Limit": "42.0"}, True),  # as numbers
        ({"region": "us", "query": "q", "limit": 42}, {"Region": "us", "Limit": "43"}, False),
        ({"region": "us", "query": "q", "dry": True}, {"Region": "us", "Dry": "true"}, True),
        ({"region": "us", "query": "q", "dry": True}, {"Region": "us", "Dry": "True"}, False),
        ({"region": "us", "query": "q", "limit": None}, {"Region": "us"}, True),  # null: no header
        ({"region": "us", "query": "q", "where": {"tenant": "t1"}}, {"Region": "us", "Tenant": "t1"}, True),
        ({"region": "us", "query": "q", "where": {"tenant": "t1"}}, {"Region": "us"}, False),
        ({"region": "us", "query": "q"}, {"Region": "=?base64?!!?="}, False),
    ],
)
async def test_mcp_param_headers_are_checked_against_the_arguments(
    anyio_backend: str, arguments: dict[str, Any], params: dict[str, str], ok: bool
) -> None:
    async with in_process(StreamableHTTPApp(modern_server())) as client:
        message = sql_call(arguments)
        headers = heads(message, **{f"mcp-param-{name.lower()}": value for name, value in params.items()})
        response, [answer] = await send(client, message, headers)
        if ok:
            assert response.status_code == 200, answer
            assert answer["result"]["content"][0]["text"] == f"{arguments['region']}:q"
        else:
            assert response.status_code == 400
            assert answer["error"]["code"] == -32020, answer


async def test_a_tool_with_an_invalid_annotation_is_not_checked(anyio_backend: str) -> None:
    async with in_process(StreamableHTTPApp(modern_server())) as client:
        response, [answer] = await send(client, call(1, "broken", {"x": 1.5}))
        assert response.status_code == 200
        assert answer["result"]["content"][0]["text"] == "unchecked"


def test_param_headers_from_schemas() -> None:
    found = param_headers(SQL_SCHEMA)
    assert found is not None
    assert {(p.path, p.name, p.header) for p in found} == {
        (("region",), "Region", b"mcp-param-region"),
        (("limit",), "Limit", b"mcp-param-limit"),
        (("dry",), "Dry", b"mcp-param-dry"),
        (("where", "tenant"), "Tenant", b"mcp-param-tenant"),
    }
    invalid = [
        {"properties": {"a": {"type": "number", "x-mcp-header": "A"}}},
        {"properties": {"a": {"type": "string", "x-mcp-header": "A B"}}},
        {"properties": {"a": {"type": "string", "x-mcp-header": ""}}},
        {
            "properties": {
                "a": {"type": "string", "x-mcp-header": "A"},
                "b": {"type": "string", "x-mcp-header": "a"},
            }
        },
        {"properties": {"a": {"type": "array", "items": {"type": "string", "x-mcp-header": "A"}}}},
        {"anyOf": [{"properties": {"a": {"type": "string", "x-mcp-header": "A"}}}]},
        {"type": "string", "x-mcp-header": "Root"},
    ]
    for schema in invalid:
        assert param_headers(schema) is None, schema
    # Data that happens to hold the key is not an annotation.
    assert param_headers({"properties": {"a": {"type": "object", "default": {"x-mcp-header": "A"}}}}) == ()


def test_header_values() -> None:
    cases = {
        "us-west1": "us-west1",
        "Hello, 世界": "=?base64?SGVsbG8sIOS4lueVjA==?=",
        " padded ": "=?base64?IHBhZGRlZCA=?=",
        "line1\nline2": "=?base64?bGluZTEKbGluZTI=?=",
        "=?base64?literal?=": "=?base64?PT9iYXNlNjQ/bGl0ZXJhbD89?=",
    }
    for value, encoded in cases.items():
        assert encode_header_value(value) == encoded
        assert decode_header_value(encoded.encode()) == value
    assert decode_header_value("caf\xe9".encode("latin-1")) is None  # not visible ASCII
    assert decode_header_value(b"=?base64?SGVsbG9=?=") is None  # not canonical (trailing bits)
    assert decode_header_value(b"=?base64?/w==?=") is None  # not UTF-8


async def test_served_without_a_lifespan(anyio_backend: str) -> None:
    """Hosts that run no ASGI lifespan: each 2026-07-28 request brings its own task group."""
    app = StreamableHTTPApp(modern_server())
    transport = httpx.ASGITransport(app=app)
    async with httpx.AsyncClient(transport=transport, base_url="http://127.0.0.1") as client:
        response, [answer] = await send(client, call(1, "nap"))
        assert response.status_code == 200
        assert answer["result"]["content"][0]["text"] == "rested"
        response, messages = await send(client, call(2, "progress", {"steps": 1}, progressToken=1))
        assert [m.get("method") for m in messages] == ["notifications/progress", None]


async def test_stopping_the_app_ends_a_listen_stream(anyio_backend: str) -> None:
    probe = Probe()
    app = StreamableHTTPApp(modern_server(probe))
    transport = httpx.ASGITransport(app=app)
    answered: list[httpx.Response] = []
    async with httpx.AsyncClient(transport=transport, base_url="http://127.0.0.1") as client:
        message = rpc(1, "subscriptions/listen", {"notifications": {"toolsListChanged": True}})

        async def listen() -> None:
            answered.append(await client.post("/mcp", json=message, headers=heads(message)))

        with anyio.fail_after(5):
            async with anyio.create_task_group() as tg:
                async with app.run():
                    tg.start_soon(listen)
                    await probe.started.wait()
                await probe.cancelled.wait()  # the app stopped: the handler is cancelled
    [response] = answered
    assert response.headers["content-type"] == "text/event-stream"
    methods = [m.get("method") for m in answers(response)]
    assert methods == ["notifications/tools/list_changed"] * 2  # and no response: it was cut short


async def test_cors_preflights_allow_the_mirrored_headers(anyio_backend: str) -> None:
    app = StreamableHTTPApp(modern_server(), cors_origins=["https://app.example"])
    async with in_process(app) as client:
        response = await client.options(
            "/mcp",
            headers={
                "origin": "https://app.example",
                "access-control-request-method": "POST",
                "access-control-request-headers": "content-type, mcp-method, mcp-name, Mcp-Param-Region",
            },
        )
        assert response.status_code == 204
        allowed = {h.strip().lower() for h in response.headers["access-control-allow-headers"].split(",")}
        assert {"content-type", "mcp-method", "mcp-name", "mcp-param-region"} <= allowed


async def test_stopping_the_app_ends_the_servers_listen_streams_with_their_results(
    anyio_backend: str,
) -> None:
    listening = anyio.Event()

    class SeeListen(Middleware):
        async def on_request(self, request: IncomingRequest[Any, Any], call_next: CallNext) -> Any:
            if request.method == "subscriptions/listen":
                listening.set()
            return await call_next(request)

    server = Server("listening", "1.0", middleware=[SeeListen()])

    @server.tool()
    def one() -> str:
        return "1"

    app = StreamableHTTPApp(server)
    transport = httpx.ASGITransport(app=app)
    answered: list[httpx.Response] = []
    async with httpx.AsyncClient(transport=transport, base_url="http://127.0.0.1") as client:
        message = rpc(7, "subscriptions/listen", {"notifications": {"toolsListChanged": True}})

        async def listen() -> None:
            answered.append(await client.post("/mcp", json=message, headers=heads(message)))

        with anyio.fail_after(5):
            async with anyio.create_task_group() as tg, app.run():
                tg.start_soon(listen)
                await listening.wait()
                await anyio.wait_all_tasks_blocked()  # the stream is open, its acknowledgement sent
                await server.tools_changed()
    [response] = answered
    messages = answers(response)
    assert [m.get("method") for m in messages] == [
        "notifications/subscriptions/acknowledged",
        "notifications/tools/list_changed",
        None,
    ]
    assert messages[1]["params"]["_meta"] == {"io.modelcontextprotocol/subscriptionId": 7}
    assert messages[2]["id"] == 7 and messages[2]["result"]["resultType"] == "complete"
