"""MCP 2026-07-28 streams of the Streamable HTTP app over a real ASGI server on 127.0.0.1
(uvicorn, hypercorn; asyncio and trio): flushed as they come, kept alive while quiet, ended by
the response, and cancelled by the client going away; ``subscriptions/listen`` is a stream even
in JSON-response mode."""

from __future__ import annotations

import json

import anyio
import pytest

from mcpbind.transports.http.server import StreamableHTTPApp
from tests import http_server_helpers as helpers
from tests.http_harness import ServerName
from tests.http_server_helpers import EventReader, Probe, running
from tests.transports.http.test_http_modern import call, heads, modern_server, rpc

pytestmark = pytest.mark.anyio
backend_and_server, anyio_backend, asgi_server = (
    helpers.backend_and_server,
    helpers.anyio_backend,
    helpers.asgi_server,
)


async def test_a_stream_is_flushed_as_it_comes_and_ends_with_the_response(asgi_server: ServerName) -> None:
    probe = Probe()
    async with running(StreamableHTTPApp(modern_server(probe)), asgi_server) as (url, client):
        message = call(1, "tick", progressToken="t")
        async with client.stream("POST", url, json=message, headers=heads(message)) as response:
            assert response.status_code == 200
            assert response.headers["content-type"] == "text/event-stream"
            assert response.headers["x-accel-buffering"] == "no"
            assert "mcp-session-id" not in response.headers
            reader = EventReader(response)
            first = await reader.next()
            assert json.loads(first["data"])["method"] == "notifications/progress"
            assert "id" not in first
            assert not probe.release.is_set()  # the handler still runs
            probe.release.set()
            last = await reader.next()
            assert json.loads(last["data"])["result"]["content"][0]["text"] == "ticked"


async def test_going_away_cancels_the_request(asgi_server: ServerName) -> None:
    probe = Probe()
    async with running(StreamableHTTPApp(modern_server(probe)), asgi_server) as (url, client):
        message = call(1, "tick", progressToken="t")
        async with client.stream("POST", url, json=message, headers=heads(message)) as response:
            await EventReader(response).next()
        with anyio.fail_after(5):
            await probe.cancelled.wait()


@pytest.mark.parametrize("json_response", [False, True], ids=["sse", "json"])
async def test_listen_is_a_stream_open_while_its_handler_runs(
    asgi_server: ServerName, json_response: bool
) -> None:
    probe = Probe()
    app = StreamableHTTPApp(modern_server(probe), json_response=json_response, keepalive_interval=0.2)
    async with running(app, asgi_server) as (url, client):
        message = rpc(1, "subscriptions/listen", {"notifications": {"toolsListChanged": True}})
        async with client.stream("POST", url, json=message, headers=heads(message)) as response:
            assert response.status_code == 200
            assert response.headers["content-type"] == "text/event-stream"
            reader = EventReader(response)
            for _ in range(2):
                event = await reader.next()
                assert json.loads(event["data"])["method"] == "notifications/tools/list_changed"
            await probe.started.wait()
            # Quiet now: keep-alive comments, and the stream stays open.
            assert (await reader.next())["comment"] == "ping"
            assert (await reader.next())["comment"] == "ping"
        with anyio.fail_after(5):
            await probe.cancelled.wait()  # the client went away: the handler is cancelled


async def test_a_silent_handler_gets_keep_alive_comments_then_its_answer(asgi_server: ServerName) -> None:
    probe = Probe()
    app = StreamableHTTPApp(modern_server(probe), keepalive_interval=0.1)
    async with running(app, asgi_server) as (url, client):
        message = call(1, "block")
        async with client.stream("POST", url, json=message, headers=heads(message)) as response:
            assert response.headers["content-type"] == "text/event-stream"
            reader = EventReader(response)
            assert (await reader.next())["comment"] == "ping"
            probe.release.set()
            while "data" not in (event := await reader.next()):
                pass
            assert json.loads(event["data"])["result"]["content"][0]["text"] == "released"


async def test_a_handler_answering_after_a_wait_answers_json(asgi_server: ServerName) -> None:
    async with running(StreamableHTTPApp(modern_server()), asgi_server) as (url, client):
        message = call(1, "nap")
        response = await client.post(url, json=message, headers=heads(message))
        assert (response.status_code, response.headers["content-type"]) == (200, "application/json")
        assert response.json()["result"]["content"][0]["text"] == "rested"
        message = call(2, "nap", {"fail": True})
        response = await client.post(url, json=message, headers=heads(message))
        assert response.status_code == 400  # an error after a wait still gets its status
        assert response.json()["error"]["code"] == -32602
