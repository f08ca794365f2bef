"""Faults of a deployment (issue 16): three ``mcpbind serve --store`` processes of
tests/scale/pid_server.py sharing one Redis behind nginx, a round-robin with no affinity
(tests/fleet.py: one fleet for the module, its servers on asyncio; whatever a test kills is
started again after it). The clients run on the test's backend.

* A worker killed with SIGKILL in the middle of a 2025 session (while it runs one of its
  requests): the client goes on in the same session through the others, with no new
  ``initialize`` and at most one retry per call.
* The worker holding a session's GET stream killed: the client's stream is taken again by
  another worker within a few seconds (the ``retry:`` the server sends is 1 s; nothing of the
  dead worker's stands in the way: a session may have several GET streams, on any workers),
  and what is sent to the session reaches it there.
* Redis restarted while serving: requests that need it get 503 with a message naming it while
  it is down (those that do not are served), and the servers serve again once it is back.

(2026-07-28 requests while a server is dead: tests/scale/test_behind_nginx.py; Redis
unreachable at start: tests/scale/test_store_option.py.)
"""

from __future__ import annotations

import json
from collections.abc import AsyncIterator, Iterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import anyio
import httpx
import pytest

from mcpbind.client.client import Client
from mcpbind.client.remote import RemoteServer
from mcpbind.transports.http.client import open_streamable_http
from tests.fleet import Fleet, running_fleet
from tests.http_server_helpers import ACCEPT_BOTH
from tests.scale.clients import call_pid, connected, retrying
from tests.scale.serving import PID_SERVER, deadline_poll

pytestmark = pytest.mark.anyio

OLD = "2025-11-25"
TIMEOUT = 60.0
# How soon a GET stream whose worker died is to be taken again by another (the client waits the
# server's retry: of 1 s first).
RETAKEN_WITHIN = 10.0
# How soon a call whose worker died fails (the dead worker's mark expires within 6 s; the
# client then gives up after its 5 reconnections, 1 s apart).
CALL_FAILS_WITHIN = 30.0


@pytest.fixture(scope="module")
def shared_fleet(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Fleet]:
    with running_fleet(tmp_path_factory.mktemp("fleet"), PID_SERVER) as running:
        yield running


@pytest.fixture
def fleet(shared_fleet: Fleet) -> Iterator[Fleet]:
    """The module's fleet, whole again after the test (Redis running, every server alive)."""
    yield shared_fleet
    shared_fleet.redis.start()
    shared_fleet.revive_all()


class Traffic:
    """What a client sent and got through nginx: each POST's JSON-RPC method, the session ids
    sent, and each GET stream's status and the upstream that took it (nginx's
    ``X-Upstream``)."""

    def __init__(self) -> None:
        self.methods: list[str] = []
        self.sessions: set[str] = set()
        self.gets: list[tuple[int, str]] = []

    async def on_request(self, request: httpx.Request) -> None:
        if "mcp-session-id" in request.headers:
            self.sessions.add(request.headers["mcp-session-id"])
        if request.method == "POST":
            self.methods.append(str(json.loads(request.content).get("method", "")))

    async def on_response(self, response: httpx.Response) -> None:
        if response.request.method == "GET":
            upstream = response.headers.get("x-upstream", "").split(",")[-1].strip()
            self.gets.append((response.status_code, upstream))

    def streams_taken(self) -> list[str]:
        """The upstreams that accepted a GET stream, in order."""
        return [upstream for status, upstream in self.gets if status == 200]


@asynccontextmanager
async def session_2025(fleet: Fleet, traffic: Traffic, client: Client) -> AsyncIterator[RemoteServer]:
    """A 2025-11-25 session of ``client`` through nginx, its HTTP traffic seen by ``traffic``."""
    hooks: dict[str, list[Any]] = {"request": [traffic.on_request], "response": [traffic.on_response]}
    async with (
        httpx.AsyncClient(timeout=20, event_hooks=hooks) as http_client,
        open_streamable_http(fleet.url, http_client=http_client) as http,
        client.connect(http) as server,
    ):
        assert server.protocol_version == OLD
        yield server


def index_of(fleet: Fleet, upstream: str) -> int:
    return next(i for i, served in enumerate(fleet.servers) if upstream == f"127.0.0.1:{served.port}")


async def test_a_2025_session_goes_on_when_a_worker_dies_in_its_request(fleet: Fleet, tmp_path: Path) -> None:
    traffic = Traffic()
    with anyio.fail_after(TIMEOUT):
        async with session_2025(fleet, traffic, Client(protocol_version=OLD)) as server:
            before = {await call_pid(server) for _ in range(3)}
            assert len(before) > 1
            marker = tmp_path / "hanging"
            failed: list[BaseException] = []

            async def hang() -> None:
                try:
                    await server.call_tool("hang", {"path": str(marker)})
                except Exception as error:
                    failed.append(error)

            async with anyio.create_task_group() as tg:
                tg.start_soon(hang)

                def hanging() -> int | None:
                    return int(marker.read_text()) if marker.exists() and marker.read_text() else None

                victim = await anyio.to_thread.run_sync(deadline_poll, hanging, "hang runs")
                fleet.kill(fleet.pids.index(victim))
                # The client resumes the call's stream on another worker, which follows it until
                # it sees its writer is gone: the call fails (and may be made again), long
                # before its own timeout.
                with anyio.fail_after(CALL_FAILS_WITHIN):
                    while not failed:
                        await anyio.sleep(0.05)
            after = [await call_pid(server) for _ in range(2 * len(fleet.servers))]  # (one retry each)
            assert victim not in after  # (nginx leaves a server out for 10 s once it failed)
    assert traffic.methods.count("initialize") == 1 and len(traffic.sessions) == 1


async def test_a_get_stream_is_taken_again_when_its_worker_dies(fleet: Fleet) -> None:
    traffic = Traffic()
    changed = anyio.Event()

    async def on_changed(params: Any, ctx: Any) -> None:
        changed.set()

    client = Client(
        protocol_version=OLD, notification_handlers={"notifications/tools/list_changed": on_changed}
    )
    with anyio.fail_after(TIMEOUT):
        async with session_2025(fleet, traffic, client) as server:
            while not traffic.streams_taken():
                await anyio.sleep(0.02)
            [holder] = traffic.streams_taken()
            [session] = traffic.sessions
            assert await retry_hint(fleet, session) == 1000
            fleet.kill(index_of(fleet, holder))
            with anyio.fail_after(RETAKEN_WITHIN):
                while len(traffic.streams_taken()) < 2:
                    await anyio.sleep(0.02)
            assert traffic.streams_taken()[-1] != holder
            await retrying(server, "change")  # (raised on any worker: heard on the new stream)
            await changed.wait()
    assert traffic.methods.count("initialize") == 1


async def retry_hint(fleet: Fleet, session: str) -> int:
    """The ``retry:`` (milliseconds) of a GET stream of ``session`` opened through nginx."""
    headers = {"accept": "text/event-stream", "mcp-protocol-version": OLD, "mcp-session-id": session}
    async with (
        httpx.AsyncClient(timeout=20) as http_client,
        http_client.stream("GET", fleet.url, headers=headers) as response,
    ):
        assert response.status_code == 200
        lines: list[str] = []
        async for line in response.aiter_lines():
            if not line:
                break  # (the end of the first event, the priming one)
            lines.append(line)
    [retry] = [int(line.removeprefix("retry:").strip()) for line in lines if line.startswith("retry:")]
    return retry


async def post(
    http_client: httpx.AsyncClient, url: str, message: dict[str, Any], session: str = ""
) -> httpx.Response:
    headers = {"content-type": "application/json", "accept": ACCEPT_BOTH, "mcp-protocol-version": OLD}
    if session:
        headers["mcp-session-id"] = session
    return await http_client.post(url, json=message, headers=headers)


async def open_session(http_client: httpx.AsyncClient, url: str) -> httpx.Response:
    initialize = {
        "jsonrpc": "2.0",
        "id": 0,
        "method": "initialize",
        "params": {"protocolVersion": OLD, "capabilities": {}, "clientInfo": {"name": "raw", "version": "1"}},
    }
    return await post(http_client, url, initialize)


PID_CALL = {"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": {"name": "pid", "arguments": {}}}


async def test_redis_restarted_while_serving(fleet: Fleet) -> None:
    with anyio.fail_after(TIMEOUT):
        async with httpx.AsyncClient(timeout=20) as http_client, connected(fleet.url) as modern:
            opened = await open_session(http_client, fleet.url)
            assert opened.status_code == 200
            session = opened.headers["mcp-session-id"]
            fleet.redis.stop()
            for _ in fleet.servers:  # (each to the next server)
                down = await post(http_client, fleet.url, PID_CALL, session)
                assert down.status_code == 503 and down.headers["retry-after"] == "1"
                message = down.json()["error"]["message"]
                assert message.startswith(f"Service unavailable: Redis at {fleet.redis.url}"), message
            assert await call_pid(modern) in fleet.pids  # (2026-07-28: no store needed to call a tool)
            fleet.redis.start()  # (empty: it kept nothing on disk)

            async def serving_again() -> httpx.Response:
                while True:
                    again = await open_session(http_client, fleet.url)
                    if again.status_code == 200:
                        return again
                    assert again.status_code == 503, again.text
                    await anyio.sleep(0.05)

            with anyio.fail_after(20):
                again = await serving_again()
            renewed = again.headers["mcp-session-id"]
            initialized = {"jsonrpc": "2.0", "method": "notifications/initialized"}
            assert (await post(http_client, fleet.url, initialized, renewed)).status_code == 202
            answered = set()
            for _ in fleet.servers:
                call = await post(http_client, fleet.url, PID_CALL, renewed)
                assert call.status_code == 200, call.text
                answered.add(call.headers["x-upstream"])
            assert len(answered) == len(fleet.servers)
            lost = await post(http_client, fleet.url, PID_CALL, session)  # (its record went with Redis)
            assert lost.status_code == 404
