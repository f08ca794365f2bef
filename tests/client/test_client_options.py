"""``Client``'s options and the failures of its version negotiation a user meets: options that
contradict each other (a ValueError naming the option, before anything is sent), a client of
stateless versions only that may not probe or finds no version in common (an McpError naming
the versions), and ``connect_url`` with a transport named (no fallback to legacy SSE).
Against scripted servers in memory (test_client_stateless.py's) and on 127.0.0.1."""

from __future__ import annotations

from typing import Any

import anyio
import pytest

from mcpbind import types
from mcpbind.client.client import Client
from mcpbind.protocol.errors import METHOD_NOT_FOUND, UNSUPPORTED_PROTOCOL_VERSION, McpError
from mcpbind.runtime.context import RequestContext
from mcpbind.transports.http.client import HTTPTransportError
from tests.client.test_client_stateless import DISCOVERED, error, methods_of, result, scripted
from tests.http_harness import serve_asgi
from tests.transports.http.http_fake_server import FakeServer, Status

pytestmark = pytest.mark.anyio

STATELESS_ONLY = ["2026-07-28"]
INITIALIZED = {
    "protocolVersion": "2025-11-25",
    "capabilities": {},
    "serverInfo": {"name": "scripted", "version": "1"},
}


async def sample(
    params: types.CreateMessageRequestParams, ctx: RequestContext[Any]
) -> types.CreateMessageResult:
    return types.CreateMessageResult(role="assistant", content=types.TextContent(text="ok"), model="m")


async def elicit(params: Any, ctx: RequestContext[Any]) -> types.ElicitResult:
    return types.ElicitResult(action="decline")


# -- options ----------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("options", "message"),
    [
        ({"versions": []}, "at least one protocol version"),
        ({"versions": ["2025-06-18"], "protocol_version": "2025-11-25"}, "is not one of versions"),
        ({"max_input_rounds": 0}, "max_input_rounds must be at least 1"),
        ({"sampling_tools": True}, "need a sampling handler"),
        ({"sampling_context": True}, "need a sampling handler"),
        ({"elicitation_modes": ["form"]}, "needs an elicitation handler"),
        ({"elicitation": elicit, "elicitation_modes": []}, "one or both of 'form' and 'url'"),
        ({"elicitation": elicit, "elicitation_modes": ["form", "sms"]}, "not ['form', 'sms']"),
    ],
    ids=[
        "no-versions",
        "pin-not-offered",
        "no-input-rounds",
        "sampling-tools-alone",
        "sampling-context-alone",
        "elicitation-modes-alone",
        "no-elicitation-mode",
        "unknown-elicitation-mode",
    ],
)
def test_options_that_cannot_work_are_refused(options: dict[str, Any], message: str) -> None:
    with pytest.raises(ValueError) as info:
        Client(**options)
    assert message in str(info.value)


@pytest.mark.parametrize(
    ("options", "declared"),
    [
        ({}, {}),
        ({"sampling": sample}, {"sampling": {}}),
        (
            {"sampling": sample, "sampling_tools": True, "sampling_context": True},
            {"sampling": {"tools": {}, "context": {}}},
        ),
        ({"elicitation": elicit}, {"elicitation": {"form": {}}}),
        ({"elicitation": elicit, "elicitation_modes": ["url"]}, {"elicitation": {"url": {}}}),
        (
            {"elicitation": elicit, "elicitation_modes": ["url", "form"]},
            {"elicitation": {"form": {}, "url": {}}},
        ),
    ],
    ids=["none", "sampling", "sampling-tools-context", "elicitation", "elicitation-url", "elicitation-both"],
)
async def test_the_capabilities_declared_follow_the_handlers(options: dict[str, Any], declared: Any) -> None:
    answers = {"initialize": [lambda i: result(i, INITIALIZED)]}
    client = Client(versions=["2025-11-25"], **options)
    async with scripted(answers, client) as (_, received):
        pass
    assert received[0]["params"]["capabilities"] == declared


# -- negotiation that fails -------------------------------------------------------------------


async def test_a_stateless_only_client_that_may_not_probe_is_told_to_pin_a_version() -> None:
    with pytest.raises(McpError) as info:
        async with scripted({}, Client(versions=STATELESS_ONLY, discover=False)):
            pass
    assert info.value.code == UNSUPPORTED_PROTOCOL_VERSION
    assert "protocol_version=" in info.value.message


async def test_a_stateless_only_client_whose_probe_is_refused_gets_the_refusal() -> None:
    answers = {"server/discover": [lambda i: error(i, METHOD_NOT_FOUND, "Method not found")]}
    with pytest.raises(McpError) as info:
        async with scripted(answers, Client(versions=STATELESS_ONLY)):
            pass
    # No initialize is tried: this client has no handshake version to ask for.
    assert (info.value.code, info.value.message) == (METHOD_NOT_FOUND, "Method not found")


async def test_a_stateless_only_client_and_a_server_of_handshake_versions() -> None:
    answers = {"server/discover": [lambda i: result(i, {**DISCOVERED, "supportedVersions": ["2025-11-25"]})]}
    with pytest.raises(McpError) as info:
        async with scripted(answers, Client(versions=STATELESS_ONLY)):
            pass
    assert info.value.code == UNSUPPORTED_PROTOCOL_VERSION
    assert "speaks none of this client's versions (2026-07-28)" in info.value.message
    assert "it offers 2025-11-25" in info.value.message


async def test_initialize_refused_after_the_probe_failed_is_raised() -> None:
    answers = {
        "server/discover": [lambda i: error(i, METHOD_NOT_FOUND, "Method not found")],
        "initialize": [lambda i: error(i, -32602, "Unsupported protocol version")],
    }
    with pytest.raises(McpError) as info:
        async with scripted(answers):
            pass
    assert (info.value.code, info.value.message) == (-32602, "Unsupported protocol version")


async def test_a_handshake_pin_the_server_refuses() -> None:
    answers = {
        "initialize": [
            lambda i: error(i, -32602, "Unsupported protocol version", {"supported": ["2024-11-05"]})
        ]
    }
    with pytest.raises(McpError) as info:
        async with scripted(answers, Client(protocol_version="2025-06-18")):
            pass
    assert (info.value.code, info.value.data) == (-32602, {"supported": ["2024-11-05"]})


async def test_a_modern_pin_with_discover_asks_the_server_first() -> None:
    answers = {"server/discover": [lambda i: result(i, DISCOVERED)]}
    client = Client(protocol_version="2026-07-28", discover=True)
    async with scripted(answers, client) as (server, received):
        assert server.stateless and server.server_info.name == "scripted"
    assert methods_of(received) == ["server/discover"]


# -- connect_url with a transport named --------------------------------------------------------


@pytest.mark.parametrize("status", [400, 404, 405])
async def test_streamable_http_named_does_not_fall_back_to_legacy_sse(status: int) -> None:
    fake = FakeServer()
    fake.post_handlers["initialize"] = lambda seen: Status(status, b"not here")
    client = Client(versions=["2025-11-25"])
    async with serve_asgi(fake) as base:
        with anyio.fail_after(10), pytest.raises(HTTPTransportError) as info:
            async with client.connect_url(f"{base}/mcp", transport="streamable-http"):
                pass
    assert (info.value.status, info.value.body) == (status, "not here")
    assert {s.method for s in fake.seen} == {"POST"}  # no GET of a legacy SSE endpoint


async def test_auto_raises_an_http_error_that_is_no_fallback_status() -> None:
    fake = FakeServer()
    fake.post_handlers["initialize"] = lambda seen: Status(403, b"forbidden")
    async with serve_asgi(fake) as base:
        with anyio.fail_after(10), pytest.raises(HTTPTransportError) as info:
            async with Client(versions=["2025-11-25"]).connect_url(f"{base}/mcp"):
                pass
    assert info.value.status == 403
    assert {s.method for s in fake.seen} == {"POST"}
