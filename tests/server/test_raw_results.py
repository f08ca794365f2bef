"""A handler of raw params (``Server(raw_params=...)``, as a proxy's are) whose raw result is not
JSON, over Streamable HTTP to a 2026-07-28 client (whose results the server decodes, to add its
identity to their ``_meta``): the request gets the JSON-RPC error -32603 (not an HTTP 500 that
leaves the app's task group failed) and the server goes on serving."""

from __future__ import annotations

from typing import Any

import anyio
import msgspec
import pytest

from mcpbind.client.client import Client
from mcpbind.protocol.errors import INTERNAL_ERROR, McpError
from mcpbind.protocol.methods import Direction, RequestSpec
from mcpbind.runtime.context import RequestContext
from mcpbind.schema import v2025_11_25 as types
from mcpbind.server.server import Server
from tests.http_harness import serve_asgi

pytestmark = pytest.mark.anyio

CALL: RequestSpec[Any, msgspec.Raw, Any] = RequestSpec(
    "tools/call", Direction.CLIENT_TO_SERVER, msgspec.Raw, msgspec.Raw, params_optional=True
)


def raw_server() -> Server:
    """tools/call answers ``{"content":}`` (not JSON) for a tool named ``bad``, after waiting
    (as a proxy's handler waits for its upstream)."""
    capabilities = types.ServerCapabilities(tools=types.ServerCapabilitiesTools())
    server = Server("raw", "1.0", capabilities=capabilities, raw_params={"tools/call"})

    @server.on(CALL)
    async def call(params: msgspec.Raw, ctx: RequestContext[Any]) -> msgspec.Raw:
        await anyio.lowlevel.checkpoint()
        name = msgspec.json.decode(params)["name"]
        return msgspec.Raw(b'{"content":}' if name == "bad" else b'{"content":[]}')

    return server


async def test_a_raw_result_that_is_not_json_is_an_internal_error() -> None:
    async with (
        serve_asgi(raw_server().http_app()) as base,
        Client("c", "1").connect_url(f"{base}/mcp") as remote,
    ):
        assert remote.stateless
        with pytest.raises(McpError) as failed:
            await remote.call_tool("bad", {})
        assert (failed.value.code, failed.value.message) == (INTERNAL_ERROR, "Internal error")
        fine = await remote.call_tool("good", {})
        assert fine.content == []
