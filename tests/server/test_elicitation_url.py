"""URL mode elicitation (MCP 2025-11-25): only to a client that declared it, the typed
URLElicitationRequiredError both ends, and notifications/elicitation/complete."""

from __future__ import annotations

from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Any, Literal

import anyio
import pytest

from mcpbind.client.client import Client
from mcpbind.client.remote import RemoteServer
from mcpbind.protocol.errors import (
    INVALID_PARAMS,
    INVALID_REQUEST,
    URL_ELICITATION_REQUIRED,
    McpError,
    URLElicitationRequiredError,
)
from mcpbind.runtime.session import RequestContext
from mcpbind.schema import v2025_11_25 as types
from mcpbind.server.elicitation import notify_elicitation_complete
from mcpbind.server.server import Server
from mcpbind.versions import HANDSHAKE_VERSIONS
from tests.harness import connected, connected_recording
from tests.http_harness import serve_asgi

pytestmark = pytest.mark.anyio
methods = types.methods

LINK = types.ElicitRequestURLParams(
    message="Connect your Example Co account",
    url="https://mcp.example.com/connect?elicitationId=e-1",
    elicitation_id="e-1",
)
FORM = types.ElicitRequestFormParams(
    message="Your name?",
    requested_schema=types.ElicitRequestFormParamsRequestedSchema(
        properties={"name": types.StringSchema()}, required=["name"]
    ),
)


@asynccontextmanager
async def over(kind: str, server: Server, client: Client) -> AsyncIterator[RemoteServer]:
    """``client`` connected to ``server`` in memory or over Streamable HTTP on 127.0.0.1."""
    if kind == "memory":
        async with connected(server, client) as session:
            yield session
        return
    async with (
        serve_asgi(server.http_app()) as base,
        client.connect_url(f"{base}/mcp", timeout=10) as session,
    ):
        yield session


class Recorder:
    """A client's elicitation handler that accepts and remembers what it was asked."""

    def __init__(self) -> None:
        self.asked: list[Any] = []

    async def __call__(self, params: Any, ctx: RequestContext) -> types.ElicitResult:
        self.asked.append(params)
        if isinstance(params, types.ElicitRequestURLParams):
            return types.ElicitResult(action="accept")
        return types.ElicitResult(action="accept", content={"name": "Ada"})


def asking_server() -> Server:
    """A server whose ``ask`` tool sends the elicitation named by its argument and reports what
    happened: the action, or the error raised before (or after) sending."""
    server = Server("asks", "1")

    @server.tool()
    async def ask(mode: Literal["url", "form"], ctx: RequestContext) -> str:
        try:
            result = await ctx.elicit(LINK if mode == "url" else FORM)
        except McpError as exc:
            return f"error {exc.code}: {exc.message}"
        assert isinstance(result, types.ElicitResult)
        return result.action

    return server


def text(result: types.CallToolResult) -> str:
    content = result.content[0]
    assert isinstance(content, types.TextContent)
    return content.text


@pytest.mark.parametrize(
    "declared",
    [types.ClientCapabilitiesElicitation(), types.ClientCapabilitiesElicitation(form={})],
    ids=["empty", "form"],
)
async def test_url_mode_is_refused_before_sending_to_a_form_only_client(
    anyio_backend: str, declared: types.ClientCapabilitiesElicitation
) -> None:
    recorder = Recorder()
    client = Client("c", "1", elicitation=recorder, versions=HANDSHAKE_VERSIONS)
    client.capabilities = types.ClientCapabilities(elicitation=declared)  # as older clients say it
    async with connected_recording(asking_server(), client) as (session, sent):
        answer = text(await session.call_tool("ask", {"mode": "url"}))
        assert answer.startswith(f"error {INVALID_REQUEST}: ")
        assert "'elicitation.url'" in answer and "nothing was sent" in answer
        # Form mode still works: `{}` means form mode.
        assert text(await session.call_tool("ask", {"mode": "form"})) == "accept"
    assert sum(b'"method":"elicitation/create"' in data for data in sent) == 1  # the form
    assert [type(p) for p in recorder.asked] == [types.ElicitRequestFormParams]


@pytest.mark.parametrize("kind", ["memory", "http"])
async def test_a_client_declaring_url_mode_gets_url_elicitations(anyio_backend: str, kind: str) -> None:
    recorder = Recorder()
    client = Client("c", "1", elicitation=recorder, elicitation_modes=("url",), versions=HANDSHAKE_VERSIONS)
    assert client.capabilities.elicitation == types.ClientCapabilitiesElicitation(url={})
    async with over(kind, asking_server(), client) as session:
        assert text(await session.call_tool("ask", {"mode": "url"})) == "accept"
        # This client declared url mode only: form mode is refused the same way.
        answer = text(await session.call_tool("ask", {"mode": "form"}))
        assert answer.startswith(f"error {INVALID_REQUEST}: ") and "'elicitation.form'" in answer
    assert recorder.asked == [LINK]

    both = Recorder()
    client = Client(
        "c", "1", elicitation=both, elicitation_modes=("form", "url"), versions=HANDSHAKE_VERSIONS
    )
    assert client.capabilities.elicitation == types.ClientCapabilitiesElicitation(form={}, url={})
    async with over(kind, asking_server(), client) as session:
        assert text(await session.call_tool("ask", {"mode": "url"})) == "accept"
        assert text(await session.call_tool("ask", {"mode": "form"})) == "accept"
    assert both.asked[0] == LINK
    assert isinstance(both.asked[1], types.ElicitRequestFormParams) and both.asked[1].message == FORM.message


async def test_a_client_declares_form_mode_by_default_and_refuses_an_undeclared_mode(
    anyio_backend: str,
) -> None:
    recorder = Recorder()
    client = Client("c", "1", elicitation=recorder, versions=HANDSHAKE_VERSIONS)
    assert client.capabilities.elicitation == types.ClientCapabilitiesElicitation(form={})
    server = asking_server()

    @server.tool()
    async def ask_anyway(ctx: RequestContext) -> str:
        # A server that believes the client declared url mode: the client must refuse (-32602).
        ctx.session.connection.peer.capabilities = types.ClientCapabilities(
            elicitation=types.ClientCapabilitiesElicitation(url={})
        )
        try:
            await ctx.elicit(LINK)
        except McpError as exc:
            return f"error {exc.code}: {exc.message}"
        return "sent"

    async with connected(server, client) as session:
        answer = text(await session.call_tool("ask_anyway"))
    assert answer.startswith(f"error {INVALID_PARAMS}: ") and "url mode" in answer
    assert recorder.asked == []
    with pytest.raises(ValueError, match="elicitation_modes"):
        Client("c", "1", elicitation=recorder, elicitation_modes=(), versions=HANDSHAKE_VERSIONS)
    with pytest.raises(ValueError, match="elicitation_modes"):
        Client("c", "1", elicitation_modes=("url",), versions=HANDSHAKE_VERSIONS)


@pytest.mark.parametrize("kind", ["memory", "http"])
async def test_url_elicitation_required_error_reaches_the_client_typed(anyio_backend: str, kind: str) -> None:
    server = Server("needs-auth", "1")

    @server.tool()
    async def files() -> str:
        raise URLElicitationRequiredError([LINK], "Authorization is required to access your files.")

    client = Client("c", "1", elicitation=Recorder(), elicitation_modes=("url",), versions=HANDSHAKE_VERSIONS)
    async with over(kind, server, client) as session:
        with pytest.raises(URLElicitationRequiredError) as caught:
            await session.call_tool("files")
        await session.ping()  # the session goes on
    error = caught.value
    assert error.code == URL_ELICITATION_REQUIRED == -32042
    assert error.message == "Authorization is required to access your files."
    assert error.elicitations == [LINK]
    assert error.data["elicitations"][0]["elicitationId"] == "e-1"
    with pytest.raises(ValueError):
        URLElicitationRequiredError([])


async def test_an_error_with_code_32042_but_no_url_elicitations_stays_a_plain_mcp_error(
    anyio_backend: str,
) -> None:
    server = Server("odd", "1")

    @server.tool()
    async def odd() -> str:
        raise McpError(URL_ELICITATION_REQUIRED, "odd", {"elicitations": [{"mode": "form"}]})

    async with connected(server) as session:
        with pytest.raises(McpError) as caught:
            await session.call_tool("odd")
    assert type(caught.value) is McpError and caught.value.code == -32042


async def test_elicitation_complete_reaches_the_client_that_was_asked(anyio_backend: str) -> None:
    completed: list[str] = []
    done = anyio.Event()

    async def on_complete(params: types.ElicitationCompleteNotificationParams, ctx: RequestContext) -> None:
        completed.append(params.elicitation_id)
        done.set()

    server = Server("asks", "1")
    refused: list[McpError] = []

    @server.tool()
    async def connect(ctx: RequestContext) -> str:
        if isinstance(ctx.peer_capabilities.elicitation.url, types.UnsetType):
            try:
                await notify_elicitation_complete(ctx, "e-0")
            except McpError as exc:  # this client did not declare url mode: nothing is sent
                refused.append(exc)
                return "refused"
        result = await ctx.elicit(LINK)
        assert isinstance(result, types.ElicitResult) and result.action == "accept"
        # The interaction happens out of band; later, from anywhere, with the session:
        await notify_elicitation_complete(ctx.session, LINK.elicitation_id)
        return "done"

    handlers = {methods.NOTIFICATIONS_ELICITATION_COMPLETE.method: on_complete}
    client = Client(
        "c",
        "1",
        elicitation=Recorder(),
        elicitation_modes=("url",),
        notification_handlers=handlers,
        versions=HANDSHAKE_VERSIONS,
    )
    async with connected(server, client) as session:
        assert text(await session.call_tool("connect")) == "done"
        with anyio.fail_after(5):
            await done.wait()
    assert completed == ["e-1"]

    async with connected(
        server, Client("c", "1", elicitation=Recorder(), versions=HANDSHAKE_VERSIONS)
    ) as session:
        assert text(await session.call_tool("connect")) == "refused"
    assert "'elicitation.url'" in refused[0].message
