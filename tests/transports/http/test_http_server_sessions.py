"""The Streamable HTTP server's sessions (DELETE, expiry, limits, running without lifespan,
memory), stateless mode, JSON mode cancellation, DNS-rebinding protection and CORS."""

from __future__ import annotations

import gc
import json

import anyio
import httpx
import pytest

from mcpbind.protocol.connection import Connection, Phase
from mcpbind.schema import v2025_11_25 as types
from mcpbind.transports.http.events import MemoryEventStore
from mcpbind.transports.http.server import (
    HttpSessionTransport,
    Receive,
    Scope,
    Send,
    StreamableHTTPApp,
    serve_http,
)
from tests import http_server_helpers as helpers
from tests.http_harness import ServerName, loopback_socket
from tests.http_server_helpers import (
    Probe,
    call,
    headers,
    initialize,
    make_server,
    open_session,
    post,
    request,
    running,
)

pytestmark = pytest.mark.anyio
backend_and_server, anyio_backend, asgi_server = (
    helpers.backend_and_server,
    helpers.anyio_backend,
    helpers.asgi_server,
)


async def test_delete_ends_the_session_and_cancels_its_handlers(asgi_server: ServerName) -> None:
    probe = Probe()
    app = StreamableHTTPApp(make_server(probe))
    async with running(app, asgi_server) as (url, client):
        session_id = await open_session(client, url)
        async with anyio.create_task_group() as tg:
            tg.start_soon(post, client, url, call(1, "block"), session_id)
            await probe.started.wait()
            response = await client.delete(url, headers=headers(session_id))
            assert response.status_code == 204
            assert probe.cancelled.is_set()  # cancelled before the DELETE was answered
        assert app.sessions == {}
        assert app.server._sessions == set()
        response, _ = await post(client, url, call(2, "echo", {"text": "x"}), session_id)
        assert response.status_code == 404
        assert (await client.delete(url, headers=headers(session_id))).status_code == 404
        assert (await client.delete(url, headers=headers())).status_code == 400


async def test_idle_sessions_expire(asgi_server: ServerName) -> None:
    app = StreamableHTTPApp(make_server(), session_idle_timeout=0.2)
    async with running(app, asgi_server) as (url, client):
        idle = await open_session(client, url)
        listening = await open_session(client, url)
        async with helpers.get_stream(client, url, listening) as stream:
            await stream.next()
            with anyio.fail_after(5):
                while idle in app.sessions:
                    await anyio.sleep(0.05)
            # A session with an open stream is in use: it does not expire.
            assert listening in app.sessions
        response, _ = await post(client, url, call(1, "echo", {"text": "x"}), idle)
        assert response.status_code == 404
        with anyio.fail_after(5):
            while app.sessions:
                await anyio.sleep(0.05)


async def test_max_sessions(asgi_server: ServerName) -> None:
    app = StreamableHTTPApp(make_server(), max_sessions=2, json_response=True)
    async with running(app, asgi_server) as (url, client):
        first = await open_session(client, url)
        await open_session(client, url)
        response = await client.post(url, json=initialize(), headers=headers(version=None))
        assert response.status_code == 503
        assert response.json()["error"]["message"].startswith("Too many sessions")
        await client.delete(url, headers=headers(first))
        await open_session(client, url)


async def test_thousand_sessions_opened_then_deleted_leave_nothing(asgi_server: ServerName) -> None:
    store = MemoryEventStore()
    app = StreamableHTTPApp(make_server(), event_store=store)
    async with running(app, asgi_server) as (url, client):

        async def cycle(count: int) -> None:
            ids = []
            for _ in range(count):
                ids.append(await open_session(client, url))
            await post(client, url, call(1, "echo", {"text": "x"}), ids[0])
            assert len(app.sessions) == count
            for session_id in ids:
                assert (await client.delete(url, headers=headers(session_id))).status_code == 204

        await cycle(50)  # warm up: caches, pools, lazily built things
        gc.collect()
        before = len(gc.get_objects())
        await cycle(1000)
        # The server's task answering the last DELETE may still be unwinding: wait for it.
        with anyio.fail_after(5):
            while [o for o in gc.get_objects() if isinstance(o, HttpSessionTransport)]:
                await anyio.sleep(0.01)
                gc.collect()
        # So may the client's and the ASGI server's objects of the last requests, which nothing
        # signals: give them a few turns of the loop (a leak of the sessions never goes away).
        for _ in range(50):
            await anyio.sleep(0.01)
            gc.collect()
            after = len(gc.get_objects())
            if after - before < 1000:
                break
        assert app.sessions == {}
        assert app.server._sessions == set()
        assert len(store) == 0 and store.session_count == 0
        # Everything a session held is freed: what remains is noise, not 1,000 sessions' worth.
        assert after - before < 1000, after - before


def is_running(app: StreamableHTTPApp) -> bool:
    return app.running


async def test_without_lifespan_initialize_gets_500_and_run_fixes_it(anyio_backend: str) -> None:
    app = StreamableHTTPApp(make_server(), json_response=True)
    transport = httpx.ASGITransport(app=app)  # no lifespan
    async with httpx.AsyncClient(transport=transport, base_url="http://127.0.0.1") as client:
        response = await client.post("/mcp", json=initialize(), headers=headers(version=None))
        assert response.status_code == 500
        assert response.json()["error"] == {
            "code": -32603,
            "message": "The MCP app is not running: serve it with ASGI lifespan enabled, "
            "or wrap the server in `async with app.run():`",
        }
        async with app.run():
            assert app.running
            session_id = await open_session(client, "/mcp")
            _, answers = await post(client, "/mcp", call(1, "echo", {"text": "ok"}), session_id)
            assert answers[0]["result"]["content"][0]["text"] == "ok"
        assert not is_running(app)
        assert app.sessions == {}
        response, _ = await post(client, "/mcp", call(2, "echo", {"text": "x"}), session_id)
        assert response.status_code == 404


async def test_leaving_run_ends_sessions_and_their_streams(anyio_backend: str) -> None:
    probe = Probe()
    app = StreamableHTTPApp(make_server(probe), keepalive_interval=None)
    transport = httpx.ASGITransport(app=app)
    done = anyio.Event()
    async with (
        anyio.create_task_group() as tg,
        httpx.AsyncClient(transport=transport, base_url="http://127.0.0.1") as client,
    ):
        async with app.run():
            session_id = await open_session(client, "/mcp")

            async def blocked() -> None:
                _, answers = await post(client, "/mcp", call(1, "block"), session_id)
                assert answers == []  # the stream ended without an answer
                done.set()

            tg.start_soon(blocked)
            await probe.started.wait()
        assert probe.cancelled.is_set()
        with anyio.fail_after(5):
            await done.wait()


async def test_json_mode_client_disconnect_cancels_the_handler(asgi_server: ServerName) -> None:
    probe = Probe()
    app = StreamableHTTPApp(make_server(probe), json_response=True)
    async with running(app, asgi_server) as (url, client):
        session_id = await open_session(client, url)
        async with httpx.AsyncClient(timeout=10) as other:
            async with anyio.create_task_group() as tg:
                tg.start_soon(lambda: other.post(url, json=call(1, "block"), headers=headers(session_id)))
                await probe.started.wait()
                tg.cancel_scope.cancel()  # the client goes away
        with anyio.fail_after(5):
            await probe.cancelled.wait()
        _, answers = await post(client, url, call(2, "echo", {"text": "fine"}), session_id)
        assert answers[0]["result"]["content"][0]["text"] == "fine"
        state = app.sessions[session_id]
        assert not state.transport._routes


async def test_unresumable_sse_client_disconnect_cancels_the_handler(asgi_server: ServerName) -> None:
    probe = Probe()
    app = StreamableHTTPApp(make_server(probe), event_store=None)
    async with running(app, asgi_server) as (url, client):
        session_id = await open_session(client, url)
        async with client.stream("POST", url, json=call(1, "block"), headers=headers(session_id)) as response:
            assert response.status_code == 200
            await probe.started.wait()
        with anyio.fail_after(5):
            await probe.cancelled.wait()
        response = await client.post(url, json=call(2, "echo", {"text": "x"}), headers=headers(session_id))
        events = helpers.sse_events(response.text)
        # No event store: no priming event, but every event still has an id.
        assert len(events) == 1 and events[0]["id"]


async def test_stateless_mode(asgi_server: ServerName) -> None:
    for json_response in (True, False):
        app = StreamableHTTPApp(make_server(), stateless=True, json_response=json_response)
        async with running(app, asgi_server) as (url, client):
            response = await client.post(url, json=initialize(), headers=headers(version=None))
            assert response.status_code == 200
            assert "mcp-session-id" not in response.headers
            # No initialize needed on this connection: each POST stands alone, at its header's version.
            response, answers = await post(client, url, call(1, "echo", {"text": "hi"}), None, "2025-06-18")
            assert response.status_code == 200 and "mcp-session-id" not in response.headers
            assert answers[-1]["result"]["content"][0]["text"] == "hi"
            events = helpers.sse_events(response.text) if not json_response else []
            assert all(e.get("data") for e in events)  # no priming event: nothing to resume
            no_header = {k: v for k, v in headers().items() if k != "mcp-protocol-version"}
            plain = await client.post(url, json=request(2, "tools/list"), headers=no_header)
            assert plain.status_code == 200
            note = {"jsonrpc": "2.0", "method": "notifications/initialized"}
            assert (await client.post(url, json=note, headers=headers())).status_code == 202
            get = await client.get(url, headers={"accept": "text/event-stream"})
            assert (get.status_code, get.headers["allow"]) == (405, "POST")
            assert (await client.delete(url, headers=headers())).status_code == 405
            _, answers = await post(client, url, call(3, "progress", {"steps": 2}, progressToken=3), None)
            if not json_response:
                assert [m.get("method") for m in answers] == ["notifications/progress"] * 2 + [None]
            assert answers[-1]["result"]["content"][0]["text"] == "done 2"


async def test_stateless_disconnect_cancels(asgi_server: ServerName) -> None:
    probe = Probe()
    app = StreamableHTTPApp(make_server(probe), stateless=True, json_response=True)
    async with running(app, asgi_server) as (url, client):
        async with anyio.create_task_group() as tg:
            tg.start_soon(lambda: client.post(url, json=call(1, "block"), headers=headers()))
            await probe.started.wait()
            tg.cancel_scope.cancel()
        with anyio.fail_after(5):
            await probe.cancelled.wait()


async def test_dns_rebinding_protection(asgi_server: ServerName) -> None:
    app = StreamableHTTPApp(make_server(), json_response=True)
    async with running(app, asgi_server) as (url, client):
        port = url.split(":")[2].split("/")[0]
        body = json.dumps(initialize())
        evil = {**headers(version=None), "host": "evil.example.com", "origin": "http://evil.example.com"}
        response = await client.post(url, content=body, headers=evil)
        assert response.status_code == 403
        evil_origin = {**headers(version=None), "origin": "http://evil.example.com"}
        assert (await client.post(url, content=body, headers=evil_origin)).status_code == 403
        evil_host = {**headers(version=None), "host": f"evil.example.com:{port}"}
        assert (await client.post(url, content=body, headers=evil_host)).status_code == 403
        for host in (f"localhost:{port}", f"127.0.0.1:{port}", "localhost"):
            good = {**headers(version=None), "host": host, "origin": f"http://{host}"}
            assert (await client.post(url, content=body, headers=good)).status_code == 200
    open_app = StreamableHTTPApp(make_server(), json_response=True, allowed_hosts=None, allowed_origins=None)
    async with running(open_app, asgi_server) as (url, client):
        evil = {**headers(version=None), "host": "evil.example.com", "origin": "http://evil.example.com"}
        assert (await client.post(url, content=json.dumps(initialize()), headers=evil)).status_code == 200


async def test_cors(asgi_server: ServerName) -> None:
    app = StreamableHTTPApp(make_server(), json_response=True, cors_origins=["https://app.example"])
    async with running(app, asgi_server) as (url, client):
        preflight = await client.options(
            url,
            headers={
                "origin": "https://app.example",
                "access-control-request-method": "POST",
                "access-control-request-headers": "content-type, mcp-session-id",
            },
        )
        assert preflight.status_code == 204
        assert preflight.headers["access-control-allow-origin"] == "https://app.example"
        assert "POST" in preflight.headers["access-control-allow-methods"]
        assert "mcp-session-id" in preflight.headers["access-control-allow-headers"].lower()
        response = await client.post(
            url, json=initialize(), headers={**headers(version=None), "origin": "https://app.example"}
        )
        assert response.status_code == 200
        assert response.headers["access-control-allow-origin"] == "https://app.example"
        assert "mcp-session-id" in response.headers["access-control-expose-headers"].lower()
        other = await client.post(
            url, json=initialize(), headers={**headers(version=None), "origin": "https://other.example"}
        )
        assert other.status_code == 403
    no_cors = StreamableHTTPApp(make_server())
    async with running(no_cors, asgi_server) as (url, client):
        response = await client.options(url, headers={"origin": "http://localhost"})
        assert response.status_code == 405


async def test_mounted_under_a_root_path(anyio_backend: str) -> None:
    app = StreamableHTTPApp(make_server(), json_response=True)

    async def outer(scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] == "http":
            scope = {**scope, "root_path": "/api"}
        await app(scope, receive, send)

    async with app.run():
        transport = httpx.ASGITransport(app=outer)
        async with httpx.AsyncClient(transport=transport, base_url="http://127.0.0.1") as client:
            response = await client.post("/api/mcp", json=initialize(), headers=headers(version=None))
            assert response.status_code == 200
            assert (await client.post("/api/other", json=initialize(), headers=headers())).status_code == 404


async def test_serve_http_runs_the_app_until_cancelled(anyio_backend: str) -> None:
    sock = loopback_socket()
    port = sock.getsockname()[1]
    sock.close()  # serve_http binds by address; the port was free a moment ago
    async with anyio.create_task_group() as tg:
        tg.start_soon(lambda: serve_http(make_server(), "127.0.0.1", port, json_response=True))
        url = f"http://127.0.0.1:{port}/mcp"
        async with httpx.AsyncClient(timeout=5) as client:
            with anyio.fail_after(10):
                while True:
                    try:
                        session_id = await open_session(client, url)
                        break
                    except httpx.ConnectError:
                        await anyio.sleep(0.05)
            _, answers = await post(client, url, call(1, "echo", {"text": "served"}), session_id)
            assert answers[0]["result"]["content"][0]["text"] == "served"
        tg.cancel_scope.cancel()


async def test_serve_http_checks_the_backend(anyio_backend: str) -> None:
    wrong = "trio" if anyio_backend == "asyncio" else "asyncio"
    with pytest.raises(RuntimeError, match="called from"):
        await serve_http(make_server(), backend=wrong)  # type: ignore[arg-type]


def test_connection_assume_ready() -> None:
    info = types.Implementation(name="s", version="1")
    connection = Connection("server", info, types.ServerCapabilities())
    connection.assume_ready("2025-06-18")
    assert (connection.phase, connection.protocol_version) == (Phase.READY, "2025-06-18")
    events = connection.receive(json.dumps(request(1, "tools/list")).encode())
    assert events[0].__class__.__name__ == "RequestReceived"
    with pytest.raises(ValueError, match="only a new server"):
        connection.assume_ready("2025-06-18")
    with pytest.raises(ValueError, match="unsupported"):
        Connection("server", info, types.ServerCapabilities()).assume_ready("1999-01-01")
    with pytest.raises(ValueError, match="only a new server"):
        Connection("client", info, types.ClientCapabilities()).assume_ready("2025-06-18")


def test_connection_fresh_copies_the_state_not_the_traffic() -> None:
    info = types.Implementation(name="s", version="1")
    ready = Connection("server", info, types.ServerCapabilities())
    ready.assume_ready("2025-06-18")
    first = ready.fresh()
    events = first.receive(json.dumps(request(1, "tools/list")).encode())
    assert events[0].__class__.__name__ == "RequestReceived"
    # The same id is new on another copy: each copy has its own requests in flight.
    second = ready.fresh()
    assert second.receive(json.dumps(request(1, "tools/list")).encode())[0].__class__.__name__ == (
        "RequestReceived"
    )
    assert (second.phase, second.protocol_version) == (Phase.READY, "2025-06-18")
    again = first.receive(json.dumps(request(1, "tools/list")).encode())
    assert "already in use" in json.loads(again[0].data)["error"]["message"]  # type: ignore[union-attr]


def test_connection_refuses_an_unknown_version_at_construction() -> None:
    info = types.Implementation(name="s", version="1")
    with pytest.raises(LookupError, match="1999-01-01"):
        Connection("server", info, types.ServerCapabilities(), versions=("2025-11-25", "1999-01-01"))


async def test_event_store_bounds(anyio_backend: str) -> None:
    store = MemoryEventStore(
        max_events_per_session=3, max_bytes_per_session=100, max_events=5, max_bytes=1000
    )
    ids = [await store.append("a", "s1", b"x") for _ in range(4)]
    assert len(store) == 3  # the oldest went
    found = await store.replay("a", ids[0])
    assert found is not None and [e.id for e in found[1]] == ids[1:]
    await store.append("a", "s2", b"y" * 90)  # over 100 bytes: the oldest go until it fits
    assert store.size <= 100
    for _ in range(3):
        await store.append("b", "s1", b"z")
    assert len(store) <= 5
    assert await store.replay("a", "s1_999999") is None
    assert await store.replay("a", "garbage") is None
    await store.forget_stream("b", "s1")
    await store.forget_session("a")
    assert (len(store), store.size, store.session_count) == (0, 0, 0)
    with pytest.raises(ValueError):
        MemoryEventStore(max_events=0)
