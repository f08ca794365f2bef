"""Tasks across workers sharing a Redis store (issue 16): two apps of the same server, each
with its own Server and RedisStore (as two processes would have), served on two ports. A task
started on one worker is read, answered, cancelled and seen completed on the other; a task
whose worker is gone is reported failed once its lease ran out."""

from __future__ import annotations

import secrets
import time
from collections.abc import AsyncIterator
from contextlib import AsyncExitStack, asynccontextmanager
from typing import Any

import anyio
import pytest

from mcpbind import types
from mcpbind.client.client import Client
from mcpbind.client.remote import RemoteServer
from mcpbind.client.tasks import TaskCancelled, ToolTask
from mcpbind.protocol.methods import RequestSpec, ToServer
from mcpbind.runtime.context import RequestContext
from mcpbind.runtime.session import Session
from mcpbind.server.server import Server
from mcpbind.server.tasks import TaskSupport
from mcpbind.server.tasks.shared_store import SharedTaskStore
from mcpbind.server.tasks.store import TaskRecord
from mcpbind.store import RedisStore
from tests.http_harness import serve_asgi

pytestmark = pytest.mark.anyio

MODERN = "2026-07-28"


class Worker:
    """One worker: its server, and what its tools let the test see. Its lease is long: its
    heartbeat (which reads its tasks' records again) never comes within a test, so what
    reaches it from the other worker comes by its signal."""

    def __init__(self) -> None:
        self.server = Server("fleet", "1", tasks=TaskSupport(poll_interval_ms=10, lease=120))
        self.gate = anyio.Event()
        self.stopped = anyio.Event()
        server = self.server

        @server.tool(task=True)
        async def slow(n: int) -> int:
            await self.gate.wait()
            return n * 2

        @server.tool(task=True)
        async def forever() -> int:
            try:
                await anyio.sleep_forever()
            finally:
                self.stopped.set()
            return 0  # pragma: no cover

        @server.tool(task=True)
        async def greet(ctx: RequestContext) -> str:
            answer = await ctx.elicit(
                types.ElicitRequestFormParams(
                    message="Your name?",
                    requested_schema=types.ElicitRequestFormParamsRequestedSchema(
                        properties={"name": types.StringSchema()}, required=["name"]
                    ),
                )
            )
            assert isinstance(answer, types.ElicitResult)
            content = answer.content if isinstance(answer.content, dict) else {}
            return f"Hello, {content.get('name')}!"


async def answer_name(params: Any, ctx: RequestContext[Any]) -> types.ElicitResult:
    return types.ElicitResult(action="accept", content={"name": "Luca"})


class Alternating:
    """A remote server whose requests go to each of ``remotes`` in turn (as a round-robin load
    balancer would send them): what :class:`ToolTask` polls through."""

    def __init__(self, remotes: list[RemoteServer]) -> None:
        self.remotes = remotes
        self.session: Session = remotes[0].session
        self.sent = 0

    @property
    def stateless(self) -> bool:
        return self.remotes[0].stateless

    @property
    def client_capabilities(self) -> Any:
        return self.remotes[0].client_capabilities

    async def request(
        self, spec: RequestSpec[Any, Any, ToServer], params: Any, *, timeout: float | None = None
    ) -> Any:
        remote = self.remotes[self.sent % len(self.remotes)]
        self.sent += 1
        return await remote.request(spec, params, timeout=timeout)


@asynccontextmanager
async def two_workers(redis_url: str) -> AsyncIterator[tuple[list[Worker], list[RemoteServer], str]]:
    """Two workers sharing a Redis store (with a prefix of this test's own), a client
    connected to each; and the prefix."""
    prefix = f"t{secrets.token_hex(4)}:"
    async with AsyncExitStack() as stack:
        workers, remotes = [], []
        for _ in range(2):
            worker = Worker()
            store = RedisStore(redis_url, prefix=prefix, timeout=1.0)
            base = await stack.enter_async_context(serve_asgi(worker.server.http_app(store=store)))
            client = Client("tester", "0.1", versions=(MODERN,), elicitation=answer_name)
            remotes.append(await stack.enter_async_context(client.connect_url(base + "/mcp")))
            workers.append(worker)
        yield workers, remotes, prefix


async def status_of(task: ToolTask) -> str:
    state = await task.status()
    found: str = state.status
    return found


async def until_status(task: ToolTask, status: str) -> None:
    while await status_of(task) != status:
        await anyio.sleep(0.01)


async def test_a_task_started_on_one_worker_completes_seen_from_the_other(redis_url: str) -> None:
    with anyio.fail_after(20):
        async with two_workers(redis_url) as ((first, _), (on_first, on_second), _):
            started = await on_first.start_tool("slow", {"n": 21})
            assert started.task_id is not None
            on_other = ToolTask(on_second, started.task_id, started.poll_interval_ms)
            assert await status_of(on_other) == "working"
            first.gate.set()
            result = await on_other.result()
            assert result.structured_content == {"result": 42}
            assert await status_of(on_other) == "completed"


async def test_input_is_answered_through_the_other_worker(redis_url: str) -> None:
    with anyio.fail_after(20):
        async with two_workers(redis_url) as (_, (on_first, on_second), _):
            started = await on_first.start_tool("greet")
            assert started.task_id is not None
            # Polled through both workers in turn: tasks/update reaches either.
            task = ToolTask(Alternating([on_second, on_first]), started.task_id, started.poll_interval_ms)
            result = await task.result()
            item = result.content[0]
            assert isinstance(item, types.TextContent) and item.text == "Hello, Luca!"
            # Answered only through the second worker: the task on the first still hears it.
            again = await on_first.start_tool("greet")
            assert again.task_id is not None
            only_second = ToolTask(on_second, again.task_id, again.poll_interval_ms)
            result = await only_second.result()
            item = result.content[0]
            assert isinstance(item, types.TextContent) and item.text == "Hello, Luca!"


async def test_a_cancel_on_the_other_worker_stops_the_task(redis_url: str) -> None:
    with anyio.fail_after(20):
        async with two_workers(redis_url) as ((first, _), (on_first, on_second), _):
            started = await on_first.start_tool("forever")
            assert started.task_id is not None
            on_other = ToolTask(on_second, started.task_id, started.poll_interval_ms)
            await on_other.cancel()
            await first.stopped.wait()  # the work stopped on the worker running it
            assert await status_of(started) == "cancelled"
            with pytest.raises(TaskCancelled):
                await on_other.result()


async def test_a_task_whose_worker_is_gone_is_reported_failed(redis_url: str) -> None:
    """A record left ``working`` by a worker that stopped heartbeating: once its lease ran out,
    any worker reads it ``failed``, saying why."""
    with anyio.fail_after(20):
        async with two_workers(redis_url) as (_, (_, on_second), prefix):
            async with RedisStore(redis_url, prefix=prefix, timeout=1.0) as store:
                now = time.time()
                task_id = "orphan-" + secrets.token_hex(4)
                await SharedTaskStore(store).create(
                    TaskRecord(
                        task_id=task_id,
                        status="working",
                        created_at=now,
                        last_updated_at=now,
                        ttl_ms=60_000,
                        poll_interval_ms=10,
                        version=MODERN,
                        owner="a worker killed",
                        lease_expires_at=now + 0.2,
                    )
                )
                task = ToolTask(on_second, task_id, 10)
                await until_status(task, "failed")
                state = await task.status()
                assert "stopped before it finished" in state.status_message
                with pytest.raises(Exception, match="stopped before it finished"):
                    await task.result()


async def test_tasks_list_pages_across_workers(redis_url: str) -> None:
    """A 2025-11-25 session's tasks/list (the only version that lists) reads the shared
    store: tasks made on one worker are listed by another, in pages."""
    prefix = f"t{secrets.token_hex(4)}:"
    async with AsyncExitStack() as stack:
        bases = []
        workers = [Worker(), Worker()]
        for worker in workers:
            worker.server.tasks.page_size = 2
            store = RedisStore(redis_url, prefix=prefix, timeout=1.0)
            bases.append(await stack.enter_async_context(serve_asgi(worker.server.http_app(store=store))))
        first = await stack.enter_async_context(
            Client("tester", "0.1", versions=("2025-11-25",)).connect_url(bases[0] + "/mcp")
        )
        second = await stack.enter_async_context(
            Client("tester", "0.1", versions=("2025-11-25",)).connect_url(bases[1] + "/mcp")
        )
        with anyio.fail_after(20):
            made = [(await first.start_tool("slow", {"n": n})).task_id for n in range(3)]
            listed: list[str] = []
            cursor: str | None = None
            while True:
                params = types.PaginatedRequestParams(cursor=types.UNSET if cursor is None else cursor)
                page = await second.request(types.methods.TASKS_LIST, params)
                listed += [task.task_id for task in page.tasks]
                if not isinstance(page.next_cursor, str):
                    break
                cursor = page.next_cursor
            assert listed == made
            workers[0].gate.set()
