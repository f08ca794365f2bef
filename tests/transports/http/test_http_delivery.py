"""What each mode of the Streamable HTTP app can deliver to the client, and what it declares.

Messages unrelated to a request (list changes, resource updates, requests sent from outside a
request's handler) reach the client only on a GET stream; what a request's handler sends
besides its response goes on the POST's SSE stream, or on the GET stream when requests are
answered with JSON; the client's answers to the server's requests reach it only in session
mode. So, with a real client that declares sampling, elicitation and roots:

* ``listChanged`` and ``resources.subscribe`` are declared only with a GET stream
  (``resources/subscribe`` gets -32601 elsewhere), ``logging`` only where log messages reach
  the client;
* requests to the client fail at once, naming the mode and the option to change, where they
  cannot reach it or no answer could come back; they work everywhere else.
"""

from __future__ import annotations

from typing import Any, Literal, NamedTuple

import anyio
import pytest

from mcpbind.client.client import Client
from mcpbind.protocol.errors import METHOD_NOT_FOUND, McpError
from mcpbind.runtime.session import RequestContext
from mcpbind.schema import v2025_11_25 as types
from mcpbind.server.server import Server
from mcpbind.transports.http.server import StreamableHTTPApp
from mcpbind.versions import HANDSHAKE_VERSIONS
from tests import http_server_helpers as helpers
from tests.http_harness import ServerName
from tests.http_server_helpers import make_server, running

pytestmark = pytest.mark.anyio
backend_and_server, anyio_backend, asgi_server = (
    helpers.backend_and_server,
    helpers.anyio_backend,
    helpers.asgi_server,
)
methods = types.methods
UNSET = types.UNSET


class Mode(NamedTuple):
    """The app's options, and what it can deliver: messages unrelated to a request, what a
    handler sends besides its response, and requests to the client from a handler."""

    stateless: bool
    json_response: bool
    get_stream: bool
    unrelated: bool
    related: bool
    requests: bool

    def app(self, server: Server) -> StreamableHTTPApp:
        return StreamableHTTPApp(
            server, stateless=self.stateless, json_response=self.json_response, get_stream=self.get_stream
        )


MODES = {
    "sse": Mode(False, False, True, True, True, True),
    "sse-no-get": Mode(False, False, False, False, True, True),
    "json": Mode(False, True, True, True, True, True),
    "json-no-get": Mode(False, True, False, False, False, False),
    "stateless-sse": Mode(True, False, False, False, True, False),
    "stateless-json": Mode(True, True, False, False, False, False),
}
SESSION_MODES = [mode for mode in MODES if not mode.startswith("stateless")]
# What the error says where a request cannot be sent: the mode, and the option to change.
REFUSALS = {
    "json-no-get": ("JSON-response mode without a GET stream", "get_stream=True"),
    "sse-no-get": ("a session without a GET stream", "get_stream=True"),
    "stateless-sse": ("stateless mode cannot send requests to the client", "stateless=False"),
    "stateless-json": ("stateless mode cannot send requests to the client", "stateless=False"),
}

Reach = Literal["sampling", "elicitation", "roots", "ping"]
METHODS = {
    "sampling": "sampling/createMessage",
    "elicitation": "elicitation/create",
    "roots": "roots/list",
    "ping": "ping",
}


async def reach_client(what: Reach, ctx: RequestContext) -> str:
    """Send the client a request of the kind ``what``; what it answered, in a few words."""
    if what == "sampling":
        sampled = await ctx.create_message(
            types.CreateMessageRequestParams(
                max_tokens=5,
                messages=[types.SamplingMessage(role="user", content=types.TextContent(text="?"))],
            )
        )
        assert isinstance(sampled, types.CreateMessageResult)
        return f"sampled {sampled.model}"
    if what == "elicitation":
        elicited = await ctx.elicit(
            types.ElicitRequestFormParams(
                message="?", requested_schema=types.ElicitRequestFormParamsRequestedSchema(properties={})
            )
        )
        assert isinstance(elicited, types.ElicitResult)
        return f"elicited {elicited.action}"
    if what == "roots":
        listed = await ctx.list_roots()
        return f"roots {[root.uri for root in listed.roots]}"
    await ctx.request(methods.PING, types.RequestParams())
    return "pinged"


def reaching_server() -> Server:
    """make_server's tools and resource, a prompt, and ``reach``: a request to the client."""
    server = make_server()

    @server.prompt()
    def greet(name: str) -> str:
        return f"Hello {name}"

    @server.tool()
    async def reach(what: Reach, ctx: RequestContext) -> str:
        return await reach_client(what, ctx)

    return server


def full_client(**options: Any) -> Client:
    """A client that declares sampling, elicitation and roots, and answers each."""

    async def sample(
        params: types.CreateMessageRequestParams, ctx: RequestContext
    ) -> types.CreateMessageResult:
        return types.CreateMessageResult(role="assistant", content=types.TextContent(text="!"), model="m1")

    async def elicit(params: Any, ctx: RequestContext) -> types.ElicitResult:
        return types.ElicitResult(action="decline")

    async def roots(params: types.RequestParams, ctx: RequestContext) -> types.ListRootsResult:
        return types.ListRootsResult(roots=[types.Root(uri="file:///r")])

    return Client(
        "full", "1", versions=HANDSHAKE_VERSIONS, sampling=sample, elicitation=elicit, roots=roots, **options
    )


@pytest.mark.parametrize("mode", MODES)
async def test_capabilities_match_the_mode(asgi_server: ServerName, mode: str) -> None:
    app = MODES[mode].app(reaching_server())
    unrelated, related = MODES[mode].unrelated, MODES[mode].related
    async with running(app, asgi_server) as (url, _), full_client().connect_url(url, timeout=10) as session:
        caps = session.server_capabilities
        if unrelated:
            await session.subscribe_resource("test://hello")
            await session.unsubscribe_resource("test://hello")
        else:
            for call in (session.subscribe_resource, session.unsubscribe_resource):
                with pytest.raises(McpError) as refused:
                    await call("test://hello")
                assert refused.value.code == METHOD_NOT_FOUND
    changes = True if unrelated else UNSET
    assert isinstance(caps.tools, types.ServerCapabilitiesTools) and caps.tools.list_changed == changes
    assert isinstance(caps.prompts, types.ServerCapabilitiesPrompts) and caps.prompts.list_changed == changes
    assert isinstance(caps.resources, types.ServerCapabilitiesResources)
    assert (caps.resources.list_changed, caps.resources.subscribe) == (changes, changes)
    # Log messages are declared where they reach the client (the server asks for logging).
    assert caps.logging == ({} if related else UNSET)


async def test_given_capabilities_lose_what_the_mode_cannot_deliver(asgi_server: ServerName) -> None:
    given = types.ServerCapabilities(
        tools=types.ServerCapabilitiesTools(list_changed=True),
        resources=types.ServerCapabilitiesResources(subscribe=True, list_changed=True),
        logging={},
        completions={},
    )
    app = StreamableHTTPApp(Server("given", "1", capabilities=given), json_response=True, get_stream=False)
    async with running(app, asgi_server) as (url, _), full_client().connect_url(url, timeout=10) as session:
        caps = session.server_capabilities
    assert caps == types.ServerCapabilities(
        tools=types.ServerCapabilitiesTools(),
        resources=types.ServerCapabilitiesResources(),
        completions={},
    )


@pytest.mark.parametrize("mode", MODES)
async def test_requests_from_a_handler_work_or_fail_at_once_saying_why(
    asgi_server: ServerName, mode: str
) -> None:
    # Each call may take 10 s: a request to the client that can never arrive used to wait for
    # the server's request timeout (a minute), then fail as timed out.
    app = MODES[mode].app(reaching_server())
    requests = MODES[mode].requests
    expected = {
        "sampling": "sampled m1",
        "elicitation": "elicited decline",
        "roots": "roots ['file:///r']",
        "ping": "pinged",
    }
    async with running(app, asgi_server) as (url, _), full_client().connect_url(url, timeout=10) as session:
        for what, answer in expected.items():
            if requests:
                result = await session.call_tool("reach", {"what": what}, timeout=10)
                assert not result.is_error and result.content == [types.TextContent(text=answer)], result
                continue
            with pytest.raises(McpError) as refused:
                await session.call_tool("reach", {"what": what}, timeout=10)
            message = refused.value.message
            method = METHODS[what]
            mode_named, option = REFUSALS[mode]
            assert f"Cannot send {method}:" in message and mode_named in message, message
            assert option in message and "did not declare" not in message, message


@pytest.mark.parametrize("mode", SESSION_MODES)
async def test_requests_from_outside_a_handler_need_the_get_stream(
    asgi_server: ServerName, mode: str
) -> None:
    """A notification's handler has no request to tie a request to: only a GET stream can
    carry it (the roots of a client that says they changed, the usual case)."""
    unrelated = MODES[mode].unrelated
    server = reaching_server()
    outcome: list[str] = []
    done = anyio.Event()

    @server.on_notification(methods.NOTIFICATIONS_ROOTS_LIST_CHANGED)
    async def roots_changed(params: types.NotificationParams, ctx: RequestContext) -> None:
        try:
            outcome.append(await reach_client("roots", ctx))
        except McpError as error:
            outcome.append(error.message)
        finally:
            done.set()

    app = MODES[mode].app(server)
    async with running(app, asgi_server) as (url, _), full_client().connect_url(url, timeout=10) as session:
        await session.send_roots_list_changed()
        with anyio.fail_after(10):  # the bug: the request waits a minute for a GET stream that never comes
            await done.wait()
    if unrelated:
        assert outcome == ["roots ['file:///r']"]
    else:
        mode_named = (
            "JSON-response mode without a GET stream"
            if mode == "json-no-get"
            else "a session without a GET stream"
        )
        assert mode_named in outcome[0] and "get_stream=True" in outcome[0], outcome
        assert outcome[0].startswith("Cannot send roots/list:"), outcome


@pytest.mark.parametrize("mode", ["json", "json-no-get"])
async def test_log_messages_and_progress_of_a_json_answer(asgi_server: ServerName, mode: str) -> None:
    """With JSON answers, what a handler sends besides its response goes on the GET stream
    while the request runs; without a GET stream it is dropped (nothing is kept for a stream
    that cannot come, no ``logging`` is declared) and the tool still works."""
    logs: list[Any] = []
    progress: list[float] = []
    seen = anyio.Event()
    server = reaching_server()

    @server.tool()
    async def watched(ctx: RequestContext) -> str:
        """Logs and reports progress, then waits until the test saw both (with a GET stream)."""
        for i in range(50):
            await ctx.log("info", f"{i} " + "x" * 100)
            await ctx.report_progress(i + 1, 50)
        if MODES[mode].unrelated:
            await seen.wait()
        return "watched"

    def check() -> None:
        if len(logs) == 50 and len(progress) == 50:
            seen.set()

    async def on_log(params: types.LoggingMessageNotificationParams) -> None:
        logs.append(params.data)
        check()

    async def on_progress(value: float, total: float | None, message: str | None) -> None:
        progress.append(value)
        check()

    app = MODES[mode].app(server)
    client = full_client(logging=on_log)
    async with running(app, asgi_server) as (url, _), client.connect_url(url, timeout=10) as session:
        result = await session.call_tool("watched", timeout=10, progress=on_progress)
        assert result.content == [types.TextContent(text="watched")], result
        if MODES[mode].unrelated:
            assert progress == list(range(1, 51)) and logs[0].startswith("0 ") and len(logs) == 50
        else:
            with pytest.raises(McpError) as refused:
                await session.set_logging_level("debug")
            assert refused.value.code == METHOD_NOT_FOUND
            (state,) = app.sessions.values()
            assert state.transport._backlog is None  # nothing waits for a GET that cannot come
