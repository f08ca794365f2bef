"""A 2025-era session served by two apps sharing one store, both in this process (a
:class:`~mcpbind.store.MemoryStore`, so no Redis): the session opened on one is found by the
other, each app's streams of it are its own, what the client sends for one copy reaches it
through the other, a copy ending with its app leaves the streams it wrote to the rest, and a
session the store cannot record ends."""

from __future__ import annotations

import json
from collections.abc import AsyncIterator
from contextlib import AsyncExitStack, asynccontextmanager

import anyio
import httpx
import pytest

from mcpbind.server.server import Server
from mcpbind.store import MemoryStore, StoreUnavailable
from mcpbind.transports.http.server import StreamableHTTPApp
from tests import http_server_helpers as helpers
from tests.http_harness import ServerName, serve_asgi
from tests.http_server_helpers import EventReader, call, headers, initialize, make_server, post, sse_events

pytestmark = pytest.mark.anyio
backend_and_server, anyio_backend, asgi_server = (
    helpers.backend_and_server,
    helpers.anyio_backend,
    helpers.asgi_server,
)

INITIALIZED = {"jsonrpc": "2.0", "method": "notifications/initialized"}


@asynccontextmanager
async def two_apps(
    asgi_server: ServerName, store: MemoryStore | None = None
) -> AsyncIterator[tuple[str, str, StreamableHTTPApp[Server], httpx.AsyncClient]]:
    """Two apps sharing ``store`` served on 127.0.0.1: their MCP URLs, the second app (to stop it
    early: leave the returned stack's inner context) and a client."""
    store = store or MemoryStore()
    first, second = (
        StreamableHTTPApp(make_server(), store=store),
        StreamableHTTPApp(make_server(), store=store),
    )
    async with AsyncExitStack() as stack:
        urls = [
            await stack.enter_async_context(serve_asgi(app, asgi_server)) + "/mcp" for app in (first, second)
        ]
        client = await stack.enter_async_context(httpx.AsyncClient(timeout=10))
        yield urls[0], urls[1], second, client


async def test_a_session_opened_on_one_app_goes_on_on_the_other(asgi_server: ServerName) -> None:
    async with two_apps(asgi_server) as (first, second, _, client):
        response = await client.post(first, json=initialize(), headers=headers(version=None))
        session_id = response.headers["mcp-session-id"]
        # Recorded before its answer left: the other app finds it for notifications/initialized.
        accepted = await client.post(second, json=INITIALIZED, headers=headers(session_id))
        assert (accepted.status_code, accepted.headers["mcp-session-id"]) == (202, session_id)
        response, answers = await post(client, second, call(1, "echo", {"text": "there"}), session_id)
        assert answers[-1]["result"]["content"][0]["text"] == "there"
        # The copy on the second app is at the version the session negotiated: a priming event.
        priming = sse_events(response.text)[0]
        assert priming["data"] == "" and priming["id"] and priming["retry"] == "1000"
        assert (await client.delete(second, headers=headers(session_id))).status_code == 204
        response, answers = await post(client, first, call(2, "echo", {"text": "x"}), session_id)
        assert response.status_code == 404 and answers[0]["error"]["code"] == -32001


async def test_the_other_apps_copy_is_as_initialized_as_the_session(asgi_server: ServerName) -> None:
    async with two_apps(asgi_server) as (first, second, second_app, client):
        session_id = await helpers.open_session(client, first)  # initialized on the first app
        async with helpers.get_stream(client, second, session_id) as stream:
            await stream.next()  # the priming event
            # A change made on the second app is told to the sessions there whose client is
            # initialized: the copy made from the session's record is one.
            second_app.server.remove_tool("echo")
            assert (await stream.next_message())["method"] == "notifications/tools/list_changed"


async def test_a_response_posted_to_the_other_app_reaches_the_waiting_request(
    asgi_server: ServerName,
) -> None:
    async with two_apps(asgi_server) as (first, second, _, client):
        session_id = await helpers.open_session(client, first)
        async with client.stream("POST", first, json=call(4, "ask"), headers=headers(session_id)) as response:
            reader = EventReader(response)
            # The second app has no request waiting for the answer: it passes it on, and accepts it.
            result = await helpers.answer_sampling(client, second, session_id, reader, "relayed")
        assert result["id"] == 4 and result["result"]["content"][0]["text"] == "relayed"


async def test_each_apps_streams_of_a_session_are_its_own(asgi_server: ServerName) -> None:
    async with two_apps(asgi_server) as (first, second, _, client):
        response = await client.post(first, json=initialize(), headers=headers(version=None))
        session_id = response.headers["mcp-session-id"]
        (answered,) = sse_events(response.text)
        accepted = await client.post(first, json=INITIALIZED, headers=headers(session_id))
        assert accepted.status_code == 202
        # The second app's first stream of the session is not the first app's first one.
        response, _ = await post(client, second, call(1, "echo", {"text": "elsewhere"}), session_id)
        assert response.status_code == 200
        resume = headers(session_id, last_event_id=answered["id"], accept="text/event-stream")
        del resume["content-type"]
        resumed = await client.get(first, headers=resume)
        assert resumed.status_code == 200
        assert sse_events(resumed.text) == []  # the initialize stream had said all it had


async def test_an_app_stopping_leaves_its_streams_to_the_others(asgi_server: ServerName) -> None:
    store = MemoryStore()
    first_app = StreamableHTTPApp(make_server(), store=store)
    async with serve_asgi(first_app, asgi_server) as base, httpx.AsyncClient(timeout=10) as client:
        first = base + "/mcp"
        session_id = await helpers.open_session(client, first)
        async with serve_asgi(StreamableHTTPApp(make_server(), store=store), asgi_server) as other:
            response, _ = await post(client, other + "/mcp", call(1, "echo", {"text": "kept"}), session_id)
            priming, answer = sse_events(response.text)
        # The second app's copy of the session ended with it; the session goes on here, and
        # the stream the second app wrote is resumed here.
        resume = headers(session_id, last_event_id=priming["id"], accept="text/event-stream")
        del resume["content-type"]
        resumed = await client.get(first, headers=resume)
        assert resumed.status_code == 200
        (again,) = sse_events(resumed.text)
        assert (
            again["id"] == answer["id"]
            and json.loads(again["data"])["result"]["content"][0]["text"] == "kept"
        )


class RecordsFail(MemoryStore):
    """A store that is away when a session's record is written."""

    async def __aenter__(self) -> RecordsFail:
        return self

    async def set(self, key: str, value: bytes, *, ttl: float | None = None) -> None:
        if key.startswith("session:"):
            raise StoreUnavailable("the test's store is away")
        await super().set(key, value, ttl=ttl)


async def test_a_session_the_store_cannot_record_ends(asgi_server: ServerName) -> None:
    for json_response in (True, False):
        app = StreamableHTTPApp(make_server(), store=RecordsFail(), json_response=json_response)
        async with serve_asgi(app, asgi_server) as base, httpx.AsyncClient(timeout=10) as client:
            response = await client.post(base + "/mcp", json=initialize(), headers=headers(version=None))
            assert response.status_code == 503, response.text
            assert "mcp-session-id" not in response.headers
            with anyio.fail_after(5):
                while app.sessions:  # ended at once: gone before long
                    await anyio.sleep(0.02)
