"""``notifications/tasks`` on ``subscriptions/listen`` streams (the tasks extension's
``taskIds``): a stream held by one worker hears the status changes of a task running on
another worker sharing the Redis store; the acknowledgement names the tasks agreed to; a
request naming tasks without declaring the extension gets -32021."""

from __future__ import annotations

import json
import secrets
from collections.abc import AsyncIterator
from contextlib import AsyncExitStack, asynccontextmanager
from typing import Any

import anyio
import httpx
import pytest

from mcpbind.client.client import Client
from mcpbind.protocol.envelope import CLIENT_CAPABILITIES, CLIENT_INFO, PROTOCOL_VERSION
from mcpbind.protocol.tasks import TASKS_EXTENSION
from mcpbind.store import RedisStore
from tests.http_harness import serve_asgi
from tests.http_server_helpers import ACCEPT_BOTH
from tests.redis_harness import STORE_TIMEOUT
from tests.tasks.test_shared_tasks import Worker

pytestmark = pytest.mark.anyio

MODERN = "2026-07-28"


def listen_request(task_ids: list[str], extension: bool = True) -> dict[str, Any]:
    capabilities: dict[str, Any] = {"extensions": {TASKS_EXTENSION: {}}} if extension else {}
    meta = {
        PROTOCOL_VERSION: MODERN,
        CLIENT_CAPABILITIES: capabilities,
        CLIENT_INFO: {"name": "raw", "version": "1"},
    }
    return {
        "jsonrpc": "2.0",
        "id": 7,
        "method": "subscriptions/listen",
        "params": {"_meta": meta, "notifications": {"taskIds": task_ids}},
    }


HEADERS = {
    "content-type": "application/json",
    "accept": ACCEPT_BOTH,
    "mcp-protocol-version": MODERN,
    "mcp-method": "subscriptions/listen",
}


async def stream_messages(response: httpx.Response) -> AsyncIterator[dict[str, Any]]:
    """The JSON-RPC messages of an SSE response, as they come."""
    data: list[str] = []
    async for line in response.aiter_lines():
        if line.startswith("data:"):
            data.append(line[5:].lstrip())
        elif not line and data:
            yield json.loads("\n".join(data))
            data = []


@asynccontextmanager
async def two_workers(redis_url: str) -> AsyncIterator[tuple[list[Worker], list[str]]]:
    prefix = f"t{secrets.token_hex(4)}:"
    async with AsyncExitStack() as stack:
        workers, urls = [Worker(), Worker()], []
        for worker in workers:
            store = RedisStore(redis_url, prefix=prefix, timeout=STORE_TIMEOUT)
            urls.append(
                await stack.enter_async_context(serve_asgi(worker.server.http_app(store=store))) + "/mcp"
            )
        yield workers, urls


@pytest.mark.parametrize("where", ["other", "same"])
async def test_a_listener_hears_a_task_running_on_either_worker(redis_url: str, where: str) -> None:
    with anyio.fail_after(20):
        async with (
            two_workers(redis_url) as ((first, _), (url_first, url_second)),
            Client("tester", "0.1", versions=(MODERN,)).connect_url(url_first) as on_first,
            httpx.AsyncClient(timeout=20) as http,
        ):
            started = await on_first.start_tool("slow", {"n": 4})
            task_id = started.task_id
            assert task_id is not None
            request = listen_request([task_id, "no-such-task"])
            url = url_second if where == "other" else url_first
            async with http.stream("POST", url, json=request, headers=HEADERS) as response:
                assert response.status_code == 200
                incoming = stream_messages(response)
                ack = await anext(incoming)
                assert ack["method"] == "notifications/subscriptions/acknowledged"
                assert ack["params"]["notifications"] == {"taskIds": [task_id]}
                now = await anext(incoming)  # its state first
                assert now["method"] == "notifications/tasks"
                assert now["params"]["taskId"] == task_id
                assert now["params"]["status"] == "working"
                assert now["params"]["_meta"]["io.modelcontextprotocol/subscriptionId"] == 7
                first.gate.set()  # the task ends on the first worker
                done = await anext(incoming)
                assert done["method"] == "notifications/tasks"
                assert done["params"]["status"] == "completed"
                assert done["params"]["result"]["structuredContent"] == {"result": 8}
                assert "resultType" not in done["params"]


async def test_task_ids_need_the_extension(redis_url: str) -> None:
    with anyio.fail_after(20):
        async with two_workers(redis_url) as (_, (url_first, _)), httpx.AsyncClient(timeout=20) as http:
            response = await http.post(
                url_first, json=listen_request(["x"], extension=False), headers=HEADERS
            )
            body = (
                response.json() if response.headers["content-type"].startswith("application/json") else None
            )
            if body is None:
                [body] = [
                    json.loads(line[5:]) for line in response.text.splitlines() if line.startswith("data:")
                ]
            assert body["error"]["code"] == -32021
            assert body["error"]["data"] == {"requiredCapabilities": {"extensions": {TASKS_EXTENSION: {}}}}
