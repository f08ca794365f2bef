"""How a session of the Streamable HTTP app lives and ends, as its client sees it: its id, the
deadline for ``notifications/initialized``, idle expiry and what counts as use, the table's
limit, what ending a session frees, and the app running once at a time."""

from __future__ import annotations

import logging
import time

import anyio
import pytest

from mcpbind.runtime.session import Session
from mcpbind.server.server import Server
from mcpbind.transports.http.events import MemoryEventStore
from mcpbind.transports.http.server import StreamableHTTPApp
from tests import http_server_helpers as helpers
from tests.http_harness import ServerName
from tests.http_server_helpers import call, headers, initialize, make_server, open_session, post, running

pytestmark = pytest.mark.anyio
backend_and_server, anyio_backend, asgi_server = (
    helpers.backend_and_server,
    helpers.anyio_backend,
    helpers.asgi_server,
)

SESSION_NOT_FOUND = -32001
SERVER_BUSY = -32000


def messages(caplog: pytest.LogCaptureFixture) -> list[str]:
    return [record.getMessage() for record in caplog.records if record.name == "mcpbind.http"]


async def wait_until_gone(app: StreamableHTTPApp[Server], session_id: str) -> None:
    with anyio.fail_after(5):
        while session_id in app.sessions:
            await anyio.sleep(0.02)


async def test_session_ids_are_long_random_and_distinct(asgi_server: ServerName) -> None:
    app = StreamableHTTPApp(make_server(), json_response=True)
    async with running(app, asgi_server) as (url, client):
        ids = {await open_session(client, url) for _ in range(3)}
    assert len(ids) == 3
    # 24 random bytes in URL-safe base64: 192 bits no client can guess.
    alphabet = set("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_")
    assert all(len(session_id) == 32 and set(session_id) <= alphabet for session_id in ids)


async def test_a_session_never_initialized_ends_after_the_deadline(
    asgi_server: ServerName, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.DEBUG, logger="mcpbind.http")
    # No idle timeout: the initialization deadline alone runs the expiry.
    app = StreamableHTTPApp(make_server(), session_idle_timeout=None, initialization_timeout=0.2)
    async with running(app, asgi_server) as (url, client):
        ready = await open_session(client, url)
        response = await client.post(url, json=initialize(), headers=headers(version=None))
        bare = response.headers["mcp-session-id"]
        gone = await open_session(client, url)
        assert (await client.delete(url, headers=headers(gone))).status_code == 204
        await wait_until_gone(app, bare)
        response, answers = await post(client, url, call(1, "echo", {"text": "x"}), bare)
        assert response.status_code == 404 and answers[0]["error"]["code"] == SESSION_NOT_FOUND
        # The session made before it, but initialized, stays past the deadline.
        assert list(app.sessions) == [ready]
        _, answers = await post(client, url, call(2, "echo", {"text": "still"}), ready)
        assert answers[0]["result"]["content"][0]["text"] == "still"
    assert f"session {bare} was never initialized: ending it" in messages(caplog)


async def test_idle_sessions_expire_without_an_initialization_deadline(
    asgi_server: ServerName, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.DEBUG, logger="mcpbind.http")
    app = StreamableHTTPApp(make_server(), session_idle_timeout=0.2, initialization_timeout=None)
    async with running(app, asgi_server) as (url, client):
        session_id = await open_session(client, url)
        await wait_until_gone(app, session_id)
        response, answers = await post(client, url, call(1, "echo", {"text": "x"}), session_id)
        assert response.status_code == 404 and answers[0]["error"]["code"] == SESSION_NOT_FOUND
    # The log names the session and when it was last used (the monotonic clock's time).
    prefix, suffix = f"session {session_id} idle since ", ": ending it"
    (ended,) = [m for m in messages(caplog) if m.startswith(prefix)]
    assert ended.endswith(suffix) and 0 < float(ended[len(prefix) : -len(suffix)]) < time.monotonic()


async def test_requests_keep_a_session_from_expiring(asgi_server: ServerName) -> None:
    app = StreamableHTTPApp(make_server(), json_response=True, session_idle_timeout=0.5)
    async with running(app, asgi_server) as (url, client):
        session_id = await open_session(client, url)
        # Three idle timeouts long, the session is used more often than each: it stays.
        end = time.monotonic() + 1.5
        ident = 0
        while time.monotonic() < end:
            ident += 1
            response, _ = await post(client, url, call(ident, "echo", {"text": "x"}), session_id)
            assert response.status_code == 200, (ident, response.text)
            await anyio.sleep(0.1)  # the pace of use, not a synchronisation
        await wait_until_gone(app, session_id)


async def test_a_get_stream_keeps_its_session_however_many_posts_end(asgi_server: ServerName) -> None:
    app = StreamableHTTPApp(make_server(), session_idle_timeout=0.2)
    async with running(app, asgi_server) as (url, client):
        session_id = await open_session(client, url)
        async with helpers.get_stream(client, url, session_id) as stream:
            await stream.next()  # the priming event: the stream is open
            for ident in range(2):  # each POST ends while the stream is still open
                response, _ = await post(client, url, call(ident, "echo", {"text": "x"}), session_id)
                assert response.status_code == 200
            # Several idle timeouts pass with only the stream open: the session stays.
            await anyio.sleep(0.8)
            assert session_id in app.sessions
            await post(client, url, call(5, "changed"), session_id)
            assert (await stream.next_message())["method"] == "notifications/tools/list_changed"
        await wait_until_gone(app, session_id)


async def test_ending_a_session_forgets_its_events(asgi_server: ServerName) -> None:
    store = MemoryEventStore()
    app = StreamableHTTPApp(make_server(), event_store=store, session_idle_timeout=0.3)
    async with running(app, asgi_server) as (url, client):
        deleted = await open_session(client, url)
        expiring = await open_session(client, url)
        assert store.session_count == 2  # each initialize's answer was kept for resumption
        assert (await client.delete(url, headers=headers(deleted))).status_code == 204
        assert store.session_count == 1  # before the DELETE was answered
        await wait_until_gone(app, expiring)
        with anyio.fail_after(5):  # the expired session is closed soon after it is gone
            while store.session_count:
                await anyio.sleep(0.02)
        assert len(store) == 0


async def test_a_session_declares_what_the_apps_mode_delivers(asgi_server: ServerName) -> None:
    # No GET stream: nothing unrelated to a request reaches the client, so no list changes.
    for get_stream, declared in ((False, {}), (True, {"listChanged": True})):
        app = StreamableHTTPApp(make_server(), json_response=True, get_stream=get_stream)
        async with running(app, asgi_server) as (url, client):
            response = await client.post(url, json=initialize(), headers=headers(version=None))
            assert response.json()["result"]["capabilities"]["tools"] == declared


@pytest.mark.parametrize("bound", [{"backlog": 2}, {"max_buffered_bytes": 150}], ids=["messages", "bytes"])
async def test_a_sessions_backlog_has_the_apps_bounds(asgi_server: ServerName, bound: dict[str, int]) -> None:
    """What waits for a GET stream is kept up to the app's bounds, the newest first: two
    list changes here (62 bytes each)."""
    app = StreamableHTTPApp(make_server(), keepalive_interval=None, **bound)  # type: ignore[arg-type]
    async with running(app, asgi_server) as (url, client):
        session_id = await open_session(client, url)
        for ident in range(3):
            await post(client, url, call(ident, "changed"), session_id)
        async with helpers.get_stream(client, url, session_id) as stream:
            for _ in range(2):
                assert (await stream.next_message())["method"] == "notifications/tools/list_changed"
            with pytest.raises(TimeoutError):
                await stream.next_message(timeout=0.3)


class SlowToEnd(Server):
    """A server whose sessions take a second to end (a cleanup of its own), or fail to."""

    def __init__(self, *, fail: bool = False) -> None:
        super().__init__("slow-to-end", "1.0")
        self.fail = fail

    async def end_session(self, session: Session) -> None:
        await super().end_session(session)
        if self.fail:
            raise RuntimeError("the cleanup failed")
        await anyio.sleep(1.0)  # the cleanup taking its time (not a synchronisation)


async def test_a_session_that_fails_to_close_is_gone_all_the_same(
    asgi_server: ServerName, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.ERROR, logger="mcpbind.http")
    app = StreamableHTTPApp(SlowToEnd(fail=True), json_response=True)
    async with running(app, asgi_server) as (url, client):
        session_id = await open_session(client, url)
        assert (await client.delete(url, headers=headers(session_id))).status_code == 204
        assert app.sessions == {}
    (failed,) = [r for r in caplog.records if r.name == "mcpbind.http" and r.levelno == logging.ERROR]
    assert failed.getMessage() == f"session {session_id} failed to close"
    assert failed.exc_info is not None and str(failed.exc_info[1]) == "the cleanup failed"


async def test_a_session_closing_as_the_app_stops_finishes_closing(asgi_server: ServerName) -> None:
    store = MemoryEventStore()
    app = StreamableHTTPApp(SlowToEnd(), event_store=store, session_idle_timeout=0.2)
    async with running(app, asgi_server) as (url, client):
        session_id = await open_session(client, url)
        await wait_until_gone(app, session_id)  # it expired: being closed, for a second
        assert store.session_count == 1
    # The app stopped meanwhile; the session was closed to the end, its events forgotten.
    assert store.session_count == 0


async def test_a_full_table_asks_to_retry_later(asgi_server: ServerName) -> None:
    app = StreamableHTTPApp(make_server(), json_response=True, max_sessions=1)
    async with running(app, asgi_server) as (url, client):
        first = await open_session(client, url)
        response = await client.post(url, json=initialize(ident=7), headers=headers(version=None))
        assert (response.status_code, response.headers["retry-after"]) == (503, "1")
        error = response.json()["error"]
        assert error["code"] == SERVER_BUSY and error["message"].startswith("Too many sessions (limit 1)")
        assert "mcp-session-id" not in response.headers and list(app.sessions) == [first]


def is_running(app: StreamableHTTPApp[Server]) -> bool:
    return app.running


async def test_an_app_runs_once_at_a_time(anyio_backend: str) -> None:
    app = StreamableHTTPApp(make_server())
    async with app.run():
        with pytest.raises(RuntimeError, match=r"^this app is already running$"):
            async with app.run():
                pass  # pragma: no cover
        assert is_running(app)
    assert not is_running(app)
    async with app.run():  # and it runs again once stopped
        assert is_running(app)
