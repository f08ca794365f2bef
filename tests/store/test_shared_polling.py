"""SSE polling across two workers sharing Redis (issue 16): the first worker closes a request's
stream early (``close_sse_stream``) and goes on with the request; the client resumes the stream
with ``GET`` + ``Last-Event-ID`` on the second worker, which writes it what the first sends
from then on, up to the response (the conformance suite's ``server-sse-polling`` behind a
round-robin balancer)."""

from __future__ import annotations

from collections.abc import AsyncIterator
from contextlib import AsyncExitStack, asynccontextmanager

import anyio
import httpx
import pytest

from mcpbind.runtime.context import RequestContext
from mcpbind.server.server import Server
from mcpbind.store import RedisStore
from mcpbind.transports.http.server import StreamableHTTPApp, close_sse_stream
from tests.http_harness import serve_asgi
from tests.http_server_helpers import sse_events
from tests.redis_harness import STORE_TIMEOUT
from tests.store.test_shared_sessions import OLD, open_session, raw

pytestmark = pytest.mark.anyio


def worker(go: anyio.Event) -> Server:
    server = Server("fleet", "1", logging=True)

    @server.tool()
    async def polled(ctx: RequestContext) -> str:
        """Closes its stream, waits for ``go``, says something and answers."""
        assert await close_sse_stream(ctx)
        await go.wait()
        await ctx.log("info", "still here")
        return "done"

    return server


@asynccontextmanager
async def two_workers(
    url: str, go: anyio.Event
) -> AsyncIterator[list[tuple[StreamableHTTPApp[Server], str]]]:
    async with AsyncExitStack() as stack:
        served = []
        for _ in range(2):
            app = worker(go).http_app(store=RedisStore(url, timeout=STORE_TIMEOUT))
            served.append((app, await stack.enter_async_context(serve_asgi(app)) + "/mcp"))
        yield served


async def test_a_stream_closed_by_one_worker_is_followed_to_its_response_by_the_other(
    redis_url: str,
) -> None:
    go = anyio.Event()
    with anyio.fail_after(60):
        async with (
            two_workers(redis_url, go) as [(_, first), (second_app, second)],
            httpx.AsyncClient(timeout=20) as client,
        ):
            session = await open_session(client, first)
            call = {"jsonrpc": "2.0", "id": 5, "method": "tools/call", "params": {"name": "polled"}}
            closed = await raw(client, first, call, session)  # (ends once the tool closed it)
            [priming] = [event for event in sse_events(closed.text) if "id" in event]
            headers = {"accept": "text/event-stream", "mcp-protocol-version": OLD, "mcp-session-id": session}
            resumed: list[httpx.Response] = []

            async def resume() -> None:
                get = await client.get(second, headers={**headers, "last-event-id": priming["id"]})
                resumed.append(get)

            async with anyio.create_task_group() as tg:
                tg.start_soon(resume)
                while session not in second_app.sessions:  # the GET reached the second worker
                    await anyio.sleep(0.01)
                go.set()
    [get] = resumed
    assert get.status_code == 200
    note, answer = sse_events(get.text)
    assert '"still here"' in note["data"]
    assert '"id":5' in answer["data"] and '"done"' in answer["data"]
