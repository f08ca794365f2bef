"""2025-era sessions shared by two workers through Redis (issue 16): a client whose requests
go to each worker in turn keeps one session (one initialize), its log level and subscriptions
made on one worker hold on the other, any worker resumes an SSE stream written by another,
DELETE on one ends it on both, and an expired record ends it too.

GET streams are sent to the first worker (the other worker's notifications reaching a GET
stream held elsewhere is not part of this yet)."""

from __future__ import annotations

import json
from collections.abc import AsyncIterator
from contextlib import AsyncExitStack, asynccontextmanager
from typing import Any

import anyio
import httpx
import msgspec
import pytest

from mcpbind import types
from mcpbind.client.client import Client
from mcpbind.oauth.access_token import AccessToken
from mcpbind.runtime.access import current_access_token
from mcpbind.runtime.context import RequestContext
from mcpbind.server.elicitation import elicit_form
from mcpbind.server.server import Server
from mcpbind.store import RedisStore, Store
from mcpbind.transports.http.client import open_streamable_http
from tests.http_harness import serve_asgi
from tests.http_server_helpers import ACCEPT_BOTH, sse_events
from tests.redis_harness import STORE_TIMEOUT

pytestmark = pytest.mark.anyio

OLD = "2025-11-25"


class Name(msgspec.Struct):
    name: str


def worker(name: str) -> Server:
    """One worker's server, built the same way by every worker (``name`` tells them apart in
    answers only)."""
    server = Server("fleet", "1", logging=True)

    @server.tool()
    async def where() -> str:
        return name

    @server.tool()
    async def chatty(ctx: RequestContext) -> str:
        await ctx.log("info", "just so you know")
        await ctx.log("error", "something broke")
        return name

    @server.tool()
    async def touch(uri: str) -> str:
        await server.resource_updated(uri)
        return name

    @server.tool()
    async def who(ctx: RequestContext) -> str:
        outcome = await elicit_form(ctx, "Your name?", Name)
        return "nobody" if outcome.value is None else f"hello {outcome.value.name} from {name}"

    @server.resource("test://doc")
    def doc() -> str:
        return "the document"

    return server


class Alternating(httpx.AsyncBaseTransport):
    """Sends each POST and DELETE to the next of ``ports`` in turn (GET to the first): a
    round-robin balancer with no affinity. ``sent``: (HTTP method, MCP method, port)."""

    def __init__(self, ports: list[int]) -> None:
        self.ports = ports
        self.turn = 0
        self.inner = httpx.AsyncHTTPTransport()
        self.sent: list[tuple[str, str, int]] = []

    async def handle_async_request(self, request: httpx.Request) -> httpx.Response:
        if request.method == "GET":
            port = self.ports[0]
        else:
            port = self.ports[self.turn % len(self.ports)]
            self.turn += 1
        request.url = request.url.copy_with(port=port)
        method = json.loads(request.content).get("method", "") if request.method == "POST" else ""
        self.sent.append((request.method, method, port))
        return await self.inner.handle_async_request(request)

    async def aclose(self) -> None:
        await self.inner.aclose()


@asynccontextmanager
async def two_workers(url: str, json_response: bool = False) -> AsyncIterator[tuple[list[str], list[Store]]]:
    stores: list[Store] = [RedisStore(url, timeout=STORE_TIMEOUT), RedisStore(url, timeout=STORE_TIMEOUT)]
    async with AsyncExitStack() as stack:
        urls = []
        for name, store in zip(("A", "B"), stores, strict=True):
            app = worker(name).http_app(store=store, json_response=json_response)
            urls.append(await stack.enter_async_context(serve_asgi(app)) + "/mcp")
        yield urls, stores


def port_of(url: str) -> int:
    port = httpx.URL(url).port
    assert port is not None
    return port


async def test_a_session_goes_on_whichever_worker_gets_each_request(redis_url: str) -> None:
    with anyio.fail_after(60):
        async with two_workers(redis_url) as ((first, second), _):
            router = Alternating([port_of(first), port_of(second)])
            logged: list[str] = []
            updated = anyio.Event()

            async def on_log(params: Any) -> None:
                logged.append(params.data)

            async def on_updated(params: Any, ctx: Any) -> None:
                if params.uri == "test://doc":
                    updated.set()

            client = Client(protocol_version=OLD, logging=on_log)
            client.notification_handlers["notifications/resources/updated"] = on_updated
            async with (
                httpx.AsyncClient(transport=router, timeout=20) as http_client,
                open_streamable_http(first, http_client=http_client) as http,
                client.connect(http) as server,
            ):
                assert server.protocol_version == OLD
                answered_by = set()
                for _ in range(4):
                    result = await server.call_tool("where", {})
                    answered_by.add(result.content[0].text)  # type: ignore[union-attr]
                assert answered_by == {"A", "B"}
                await server.set_logging_level("error")
                for _ in range(2):  # once on each worker
                    await server.call_tool("chatty", {})
                assert logged == ["something broke", "something broke"]
                # The subscription is made on the first worker, and the update raised on the other.
                if router.turn % 2:
                    await server.call_tool("where", {})
                await server.subscribe_resource("test://doc")
                touched = await server.call_tool("touch", {"uri": "test://doc"})
                assert touched.content[0].text == "B"  # type: ignore[union-attr]
                await updated.wait()
            initializes = [sent for sent in router.sent if sent[1] == "initialize"]
            assert len(initializes) == 1
            assert {port for method, _, port in router.sent if method == "POST"} == set(router.ports)


async def raw(client: httpx.AsyncClient, url: str, body: dict[str, Any], session: str = "") -> httpx.Response:
    headers = {"content-type": "application/json", "accept": ACCEPT_BOTH, "mcp-protocol-version": OLD}
    if session:
        headers["mcp-session-id"] = session
    return await client.post(url, json=body, headers=headers)


async def open_session(client: httpx.AsyncClient, url: str) -> str:
    initialize = {
        "jsonrpc": "2.0",
        "id": 0,
        "method": "initialize",
        "params": {"protocolVersion": OLD, "capabilities": {}, "clientInfo": {"name": "raw", "version": "1"}},
    }
    response = await raw(client, url, initialize)
    assert response.status_code == 200
    session = response.headers["mcp-session-id"]
    initialized = await raw(client, url, {"jsonrpc": "2.0", "method": "notifications/initialized"}, session)
    assert initialized.status_code == 202
    return session


def where(ident: int) -> dict[str, Any]:
    return {
        "jsonrpc": "2.0",
        "id": ident,
        "method": "tools/call",
        "params": {"name": "where", "arguments": {}},
    }


async def test_a_stream_written_on_one_worker_is_resumed_on_the_other(redis_url: str) -> None:
    with anyio.fail_after(60):
        async with two_workers(redis_url) as ((first, second), _), httpx.AsyncClient(timeout=20) as client:
            session = await open_session(client, first)
            response = await raw(client, first, where(1), session)
            events = sse_events(response.text)
            priming, answer = events[0], events[-1]
            assert '"A"' in answer["data"]
            headers = {"accept": "text/event-stream", "mcp-protocol-version": OLD, "mcp-session-id": session}
            resumed = await client.get(second, headers={**headers, "last-event-id": priming["id"]})
            assert resumed.status_code == 200
            [again] = sse_events(resumed.text)
            assert again["id"] == answer["id"] and again["data"] == answer["data"]


async def test_delete_on_one_worker_ends_the_session_on_both(redis_url: str) -> None:
    with anyio.fail_after(60):
        async with (
            two_workers(redis_url, json_response=True) as ((first, second), _),
            httpx.AsyncClient(timeout=20) as client,
        ):
            session = await open_session(client, first)
            assert (await raw(client, second, where(1), session)).status_code == 200
            headers = {"mcp-protocol-version": OLD, "mcp-session-id": session}
            assert (await client.delete(second, headers=headers)).status_code == 204
            for url in (first, second):
                assert (await raw(client, url, where(2), session)).status_code == 404
            unknown = await raw(client, second, where(3), "no-such-session")
            assert unknown.status_code == 404


async def test_an_expired_record_ends_the_session(redis_url: str) -> None:
    with anyio.fail_after(60):
        async with (
            two_workers(redis_url) as ((first, second), stores),
            httpx.AsyncClient(timeout=20) as client,
        ):
            session = await open_session(client, first)
            assert (await raw(client, second, where(1), session)).status_code == 200
            await stores[0].delete(f"session:{session}")  # as its time to live would
            for url in (second, first):
                assert (await raw(client, url, where(2), session)).status_code == 404


def with_principal(app: Any) -> Any:
    """``app`` behind a stand-in for the authorization middleware: the request's ``x-who``
    header is the subject of its access token."""

    async def protected(scope: Any, receive: Any, send: Any) -> None:
        if scope["type"] != "http":
            await app(scope, receive, send)
            return
        who = dict(scope["headers"]).get(b"x-who", b"").decode()
        reset = current_access_token.set(AccessToken("t", who, "client", frozenset(), issuer="issuer"))
        try:
            await app(scope, receive, send)
        finally:
            current_access_token.reset(reset)

    return protected


async def test_another_principal_does_not_find_the_session_on_any_worker(redis_url: str) -> None:
    with anyio.fail_after(60):
        async with AsyncExitStack() as stack:
            urls = []
            for name in ("A", "B"):
                store = RedisStore(redis_url, timeout=STORE_TIMEOUT)
                app = with_principal(worker(name).http_app(store=store))
                urls.append(await stack.enter_async_context(serve_asgi(app)) + "/mcp")
            first, second = urls
            ada = await stack.enter_async_context(httpx.AsyncClient(timeout=20, headers={"x-who": "ada"}))
            eve = await stack.enter_async_context(httpx.AsyncClient(timeout=20, headers={"x-who": "eve"}))
            session = await open_session(ada, first)
            assert (await raw(eve, second, where(1), session)).status_code == 404
            assert (await raw(ada, second, where(2), session)).status_code == 200
            assert (await raw(eve, first, where(3), session)).status_code == 404


async def test_a_request_to_the_client_is_answered_through_the_other_worker(redis_url: str) -> None:
    with anyio.fail_after(60):
        async with two_workers(redis_url) as ((first, second), _):
            router = Alternating([port_of(first), port_of(second)])

            async def elicit(params: Any, ctx: Any) -> types.ElicitResult:
                return types.ElicitResult(action="accept", content={"name": "Ada"})

            client = Client(protocol_version=OLD, elicitation=elicit)
            async with (
                httpx.AsyncClient(transport=router, timeout=20) as http_client,
                open_streamable_http(first, http_client=http_client) as http,
                client.connect(http) as server,
            ):
                for _ in range(2):  # a handler on each worker asks
                    result = await server.call_tool("who", {})
                    text = result.content[0].text  # type: ignore[union-attr]
                    assert text.startswith("hello Ada from ")
            posts = [(method, port) for http_method, method, port in router.sent if http_method == "POST"]
            calls = [i for i, (method, _) in enumerate(posts) if method == "tools/call"]
            for i in calls:  # each answer went to the worker that did not ask
                assert posts[i + 1] == ("", next(p for p in router.ports if p != posts[i][1]))


async def test_a_get_stream_on_one_worker_carries_the_other_workers_requests(redis_url: str) -> None:
    """JSON responses: a handler's request to the client goes on the session's GET stream,
    held by the first worker whichever worker runs the handler."""
    with anyio.fail_after(60):
        async with AsyncExitStack() as stack:
            apps, urls = [], []
            for name in ("A", "B"):
                store = RedisStore(redis_url, timeout=STORE_TIMEOUT)
                app = worker(name).http_app(store=store, json_response=True)
                apps.append(app)
                urls.append(await stack.enter_async_context(serve_asgi(app)) + "/mcp")
            router = Alternating([port_of(url) for url in urls])

            async def elicit(params: Any, ctx: Any) -> types.ElicitResult:
                return types.ElicitResult(action="accept", content={"name": "Ada"})

            client = Client(protocol_version=OLD, elicitation=elicit)
            http_client = await stack.enter_async_context(httpx.AsyncClient(transport=router, timeout=20))
            http = await stack.enter_async_context(open_streamable_http(urls[0], http_client=http_client))
            server = await stack.enter_async_context(client.connect(http))
            while not any(state.transport.listening for state in apps[0].sessions.values()):
                await anyio.sleep(0.01)  # the client's GET stream is open (on the first worker)
            answered_by = set()
            for _ in range(2):  # a handler on each worker asks
                result = await server.call_tool("who", {})
                text = result.content[0].text  # type: ignore[union-attr]
                assert text.startswith("hello Ada from ")
                answered_by.add(text[-1])
                await server.call_tool("where", {})  # (the next call goes to the other worker)
            assert answered_by == {"A", "B"}


async def test_a_subscription_made_on_another_worker_holds_for_the_get_streams_worker(
    redis_url: str,
) -> None:
    """The subscription is made on the second worker while the first holds the GET stream; an
    update the second raises reaches the client through the first, which saw no request of the
    session since."""
    with anyio.fail_after(60):
        async with AsyncExitStack() as stack:
            apps, urls = [], []
            for name in ("A", "B"):
                store = RedisStore(redis_url, timeout=STORE_TIMEOUT)
                app = worker(name).http_app(store=store)
                apps.append(app)
                urls.append(await stack.enter_async_context(serve_asgi(app)) + "/mcp")
            router = Alternating([port_of(url) for url in urls])
            updated = anyio.Event()

            async def on_updated(params: Any, ctx: Any) -> None:
                updated.set()

            client = Client(protocol_version=OLD)
            client.notification_handlers["notifications/resources/updated"] = on_updated
            http_client = await stack.enter_async_context(httpx.AsyncClient(transport=router, timeout=20))
            http = await stack.enter_async_context(open_streamable_http(urls[0], http_client=http_client))
            server = await stack.enter_async_context(client.connect(http))
            while not any(state.transport.listening for state in apps[0].sessions.values()):
                await anyio.sleep(0.01)
            if router.turn % 2 == 0:
                await server.call_tool("where", {})  # (the subscription goes to the second)
            await server.subscribe_resource("test://doc")
            [held] = apps[0].sessions.values()
            while "test://doc" not in apps[0].server.subscriptions_of(held.session):
                await anyio.sleep(0.01)
            await apps[1].server.resource_updated("test://doc")
            await updated.wait()
