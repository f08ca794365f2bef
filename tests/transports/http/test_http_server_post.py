"""The Streamable HTTP server's POST: answers as JSON and as SSE, 202s, and every refusal."""

from __future__ import annotations

import json
from collections.abc import AsyncIterator

import anyio
import httpx
import pytest

from mcpbind.schema.v2025_11_25 import methods
from mcpbind.transports.http.server import StreamableHTTPApp
from tests import http_server_helpers as helpers
from tests.http_harness import ServerName
from tests.http_server_helpers import (
    LATEST,
    Probe,
    call,
    headers,
    initialize,
    make_server,
    messages,
    open_session,
    post,
    request,
    running,
    sse_events,
)

pytestmark = pytest.mark.anyio
# Each test runs under uvicorn (asyncio) and hypercorn (asyncio and trio).
backend_and_server, anyio_backend, asgi_server = (
    helpers.backend_and_server,
    helpers.anyio_backend,
    helpers.asgi_server,
)
SESSION_NOT_FOUND = -32001


async def test_json_mode_initialize_list_and_call(asgi_server: ServerName) -> None:
    app = StreamableHTTPApp(make_server(), json_response=True)
    async with running(app, asgi_server) as (url, client):
        response = await client.post(url, json=initialize(), headers=headers(version=None))
        assert response.status_code == 200
        assert response.headers["content-type"] == "application/json"
        session_id = response.headers["mcp-session-id"]
        assert session_id.isascii() and all(0x21 <= ord(c) <= 0x7E for c in session_id)
        assert response.json()["result"]["protocolVersion"] == LATEST
        note = {"jsonrpc": "2.0", "method": "notifications/initialized"}
        accepted = await client.post(url, json=note, headers=headers(session_id))
        assert (accepted.status_code, accepted.content) == (202, b"")

        response, answers = await post(client, url, request(1, "tools/list"), session_id)
        assert response.headers["content-type"] == "application/json"
        assert "echo" in [tool["name"] for tool in answers[0]["result"]["tools"]]
        _, answers = await post(client, url, call(2, "echo", {"text": "hi"}), session_id)
        assert answers[0]["id"] == 2
        assert answers[0]["result"]["content"] == [{"type": "text", "text": "hi"}]
        _, answers = await post(
            client, url, request("r", "resources/read", {"uri": "test://hello"}), session_id
        )
        assert answers[0]["id"] == "r"
        assert answers[0]["result"]["contents"][0]["text"] == "hello"


async def test_sse_mode_carries_progress_then_the_response(asgi_server: ServerName) -> None:
    app = StreamableHTTPApp(make_server())
    async with running(app, asgi_server) as (url, client):
        session_id = await open_session(client, url)
        response = await client.post(
            url, json=call(7, "progress", {"steps": 3}, progressToken="tok"), headers=headers(session_id)
        )
        assert response.status_code == 200
        assert response.headers["content-type"] == "text/event-stream"
        assert response.headers["mcp-session-id"] == session_id
        events = sse_events(response.text)
        assert all("id" in event for event in events if "comment" not in event)
        got = messages(events)
        assert [m["params"]["progress"] for m in got[:-1]] == [1, 2, 3]
        assert all(m["method"] == "notifications/progress" for m in got[:-1])
        assert got[-1]["id"] == 7 and got[-1]["result"]["content"][0]["text"] == "done 3"


async def test_sse_initialize_gets_the_session_id(asgi_server: ServerName) -> None:
    app = StreamableHTTPApp(make_server())
    async with running(app, asgi_server) as (url, client):
        response = await client.post(url, json=initialize("2025-06-18"), headers=headers(version=None))
        assert response.headers["content-type"] == "text/event-stream"
        assert "mcp-session-id" in response.headers
        (answer,) = messages(sse_events(response.text))
        assert answer["result"]["protocolVersion"] == "2025-06-18"


async def test_notifications_and_responses_get_202(asgi_server: ServerName) -> None:
    app = StreamableHTTPApp(make_server())
    async with running(app, asgi_server) as (url, client):
        session_id = await open_session(client, url)
        response = await client.post(
            url, json={"jsonrpc": "2.0", "id": 99, "result": {}}, headers=headers(session_id)
        )
        assert (response.status_code, response.content) == (202, b"")
        cancel = {"jsonrpc": "2.0", "method": "notifications/cancelled", "params": {"requestId": 5}}
        response = await client.post(url, json=cancel, headers=headers(session_id))
        assert response.status_code == 202


async def test_refusals(asgi_server: ServerName) -> None:
    app = StreamableHTTPApp(make_server(), max_body_size=1000)
    async with running(app, asgi_server) as (url, client):
        session_id = await open_session(client, url)
        ok = headers(session_id)
        body = json.dumps(call(1, "echo", {"text": "x"}))

        async def status(content: bytes | str, hdrs: dict[str, str], method: str = "POST") -> httpx.Response:
            return await client.request(method, url, content=content, headers=hdrs)

        response = await status(body, {**ok, "content-type": "text/plain"})
        assert response.status_code == 415
        assert response.json()["error"]["code"] == -32600
        assert (await status(body, {**ok, "accept": "application/json"})).status_code == 406
        assert (await status(body, {**ok, "accept": "text/event-stream"})).status_code == 406
        no_accept = {k: v for k, v in ok.items() if k != "accept"}
        assert (await client.post(url, content=body, headers={**no_accept, "accept": ""})).status_code == 406
        # Wildcards count as both.
        assert (await status(body, {**ok, "accept": "*/*"})).status_code == 200
        response = await status("x" * 1001, ok)
        assert response.status_code == 413

        async def chunks() -> AsyncIterator[bytes]:
            for _ in range(20):
                yield b" " * 100

        streamed = await client.post(url, content=chunks(), headers=ok)
        assert streamed.status_code == 413
        response = await status("{not json", ok)
        assert response.status_code == 400
        assert response.json()["error"]["code"] == -32700
        response = await status(json.dumps([call(1, "echo", {"text": "x"})]), ok)
        assert response.status_code == 400
        assert response.json()["error"]["code"] == -32600
        response = await status('"just a string"', ok)
        assert (response.status_code, response.json()["error"]["code"]) == (400, -32600)
        response = await status(json.dumps(request(None, "tools/list")), ok)  # type: ignore[arg-type]
        assert response.status_code == 400
        response = await status(body, {**ok, "mcp-protocol-version": "1999-01-01"})
        assert response.status_code == 400
        assert "Unsupported MCP-Protocol-Version" in response.json()["error"]["message"]
        # Without a session id, with an unknown one, initialize with one.
        response = await status(body, {k: v for k, v in ok.items() if k != "mcp-session-id"})
        assert response.status_code == 400
        assert (await status(body, {**ok, "mcp-session-id": "nope"})).status_code == 404
        assert (await status(json.dumps(initialize()), ok)).status_code == 400
        # Wrong path, wrong method.
        wrong = await client.post(url + "/other", content=body, headers=ok)
        assert wrong.status_code == 404
        response = await status(body, ok, "PUT")
        assert response.status_code == 405
        assert response.headers["allow"] == "GET, POST, DELETE"
        # And the session still works.
        _, answers = await post(client, url, call(3, "echo", {"text": "still"}), session_id)
        assert answers[-1]["result"]["content"][0]["text"] == "still"


async def test_duplicate_request_id_in_flight_is_refused(asgi_server: ServerName) -> None:
    probe = Probe()
    app = StreamableHTTPApp(make_server(probe), json_response=True)
    async with running(app, asgi_server) as (url, client):
        session_id = await open_session(client, url)
        async with anyio.create_task_group() as tg:
            results: list[httpx.Response] = []

            async def first() -> None:
                results.append((await post(client, url, call(1, "block"), session_id))[0])

            tg.start_soon(first)
            await probe.started.wait()
            response, answers = await post(client, url, call(1, "echo", {"text": "x"}), session_id)
            assert response.status_code == 400
            assert answers[0]["id"] == 1
            assert answers[0]["error"] == {"code": -32600, "message": "Request id 1 is already in use"}
            probe.release.set()
        assert results[0].json()["result"]["content"][0]["text"] == "released"


async def test_failed_initialize_leaves_no_session(asgi_server: ServerName) -> None:
    app = StreamableHTTPApp(make_server(), json_response=True)
    async with running(app, asgi_server) as (url, client):
        bad = request(0, "initialize", {"protocolVersion": LATEST})  # no capabilities, no clientInfo
        response = await client.post(url, json=bad, headers=headers(version=None))
        assert response.status_code == 200
        assert response.json()["error"]["code"] == -32602
        assert "mcp-session-id" not in response.headers
        assert app.sessions == {}


async def test_a_notification_is_accepted_before_its_handler_runs(asgi_server: ServerName) -> None:
    server = make_server()
    entered, release, finished = anyio.Event(), anyio.Event(), anyio.Event()

    @server.on_notification(methods.NOTIFICATIONS_ROOTS_LIST_CHANGED)
    async def roots_changed(params: object, ctx: object) -> None:
        entered.set()
        await release.wait()
        finished.set()

    app = StreamableHTTPApp(server)
    async with running(app, asgi_server) as (url, client):
        session_id = await open_session(client, url)
        note = {"jsonrpc": "2.0", "method": "notifications/roots/list_changed"}
        with anyio.fail_after(5):  # a 202 held back by the handler would never come
            accepted = await client.post(url, json=note, headers=headers(session_id))
        assert (accepted.status_code, accepted.content) == (202, b"")
        assert accepted.headers["mcp-session-id"] == session_id
        await entered.wait()
        assert not finished.is_set()
        release.set()
        await finished.wait()


async def test_a_response_reaches_the_request_waiting_for_it(asgi_server: ServerName) -> None:
    app = StreamableHTTPApp(make_server())
    async with running(app, asgi_server) as (url, client):
        session_id = await open_session(client, url)
        async with client.stream("POST", url, json=call(4, "ask"), headers=headers(session_id)) as response:
            reader = helpers.EventReader(response)
            result = await helpers.answer_sampling(client, url, session_id, reader, "hello")
        assert result["id"] == 4 and result["result"]["content"][0]["text"] == "hello"


async def test_a_session_the_server_ended_is_not_found(asgi_server: ServerName) -> None:
    app = StreamableHTTPApp(make_server(), json_response=True)
    async with running(app, asgi_server) as (url, client):
        session_id = await open_session(client, url)
        # The host ends it through the server: the app still holds it until it closes it.
        await app.server.end_session(app.sessions[session_id].session)
        note = {"jsonrpc": "2.0", "method": "notifications/roots/list_changed"}
        for message in (call(1, "echo", {"text": "x"}), note):
            response = await client.post(url, json=message, headers=headers(session_id))
            assert response.status_code == 404
            assert response.json()["error"] == {"code": SESSION_NOT_FOUND, "message": "Session ended"}


async def test_session_ids_refused_say_why(asgi_server: ServerName) -> None:
    app = StreamableHTTPApp(make_server(), json_response=True)
    async with running(app, asgi_server) as (url, client):
        session_id = await open_session(client, url)
        # An initialize naming a session: refused with the initialize's id (or none, for one
        # sent as a notification).
        response = await client.post(url, json=initialize(ident=3), headers=headers(session_id))
        assert response.status_code == 400 and "mcp-session-id" not in response.headers
        assert response.json()["id"] == 3
        assert response.json()["error"] == {
            "code": -32600,
            "message": "Bad request: initialize must not carry an Mcp-Session-Id",
        }
        note = {"jsonrpc": "2.0", "method": "initialize", "params": initialize()["params"]}
        response = await client.post(url, json=note, headers=headers(session_id))
        assert response.status_code == 400 and response.json()["id"] is None
        assert response.json()["error"]["code"] == -32600
        # A request naming no session, or one unknown here.
        body = call(1, "echo", {"text": "x"})
        response = await client.post(url, json=body, headers=headers())
        assert response.status_code == 400
        assert response.json()["error"] == {
            "code": -32600,
            "message": "Bad request: missing Mcp-Session-Id header",
        }
        response = await client.post(url, json=body, headers=headers("no-such-session"))
        assert response.status_code == 404
        assert response.json()["error"] == {"code": SESSION_NOT_FOUND, "message": "Session not found"}
        assert list(app.sessions) == [session_id]
