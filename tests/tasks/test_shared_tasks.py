"""Tasks across workers sharing a Redis store (issue 16): two apps of the same server, each
with its own Server and RedisStore (as two processes would have), served on two ports. A task
started on one worker is read, answered, cancelled and seen completed on the other; a task
whose worker is gone is reported failed once its lease ran out."""

from __future__ import annotations

import secrets
import time
from collections.abc import AsyncIterator, Sequence
from contextlib import AsyncExitStack, asynccontextmanager
from typing import Any

import anyio
import httpx
import pytest

from mcpbind import types
from mcpbind.client.client import Client
from mcpbind.client.remote import RemoteServer
from mcpbind.client.subscriptions import Listener
from mcpbind.client.tasks import TaskCancelled, ToolTask
from mcpbind.protocol.errors import McpError
from mcpbind.protocol.methods import RequestSpec, ToServer
from mcpbind.runtime.context import RequestContext
from mcpbind.runtime.session import Session
from mcpbind.server.server import Server
from mcpbind.server.tasks import TaskSupport
from mcpbind.server.tasks.shared_store import SharedTaskStore
from mcpbind.server.tasks.store import TaskRecord
from mcpbind.store import RedisStore
from tests.http_harness import serve_asgi
from tests.redis_harness import STORE_TIMEOUT, RedisServer
from tests.tasks.test_tasks import ask_name

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
            return await ask_name(ctx)


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

    def listen(self, *, task_ids: Sequence[str] = ()) -> Listener:
        """A listen stream through the next remote in turn."""
        remote = self.remotes[self.sent % len(self.remotes)]
        self.sent += 1
        return remote.listen(task_ids=task_ids)


@asynccontextmanager
async def two_workers(
    redis_url: str, timeout: float = STORE_TIMEOUT
) -> AsyncIterator[tuple[list[Worker], list[RemoteServer], str]]:
    """Two workers sharing a Redis store (with a prefix of this test's own), a client
    connected to each; and the prefix."""
    prefix = f"t{secrets.token_hex(4)}:"
    async with AsyncExitStack() as stack:
        workers, remotes = [], []
        for _ in range(2):
            worker = Worker()
            store = RedisStore(redis_url, prefix=prefix, timeout=timeout)
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
            async with RedisStore(redis_url, prefix=prefix, timeout=STORE_TIMEOUT) as store:
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
            store = RedisStore(redis_url, prefix=prefix, timeout=STORE_TIMEOUT)
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


async def test_a_2025_session_hears_status_changes_made_on_either_worker(redis_url: str) -> None:
    """A 2025-11-25 session whose requests go to each worker in turn (its GET stream held by
    the first): the status notifications of its tasks reach it wherever the task runs and
    whichever worker changed it."""
    from mcpbind.transports.http.client import open_streamable_http
    from tests.store.test_shared_sessions import Alternating as Router
    from tests.store.test_shared_sessions import port_of

    prefix = f"t{secrets.token_hex(4)}:"
    heard: list[tuple[str, str]] = []
    news = anyio.Event()

    async def on_status(params: types.TaskStatusNotificationParams, ctx: Any) -> None:
        nonlocal news
        heard.append((params.task_id, params.status))
        news.set()
        news = anyio.Event()

    async def until_heard(task_id: str | None, status: str) -> None:
        while (task_id, status) not in heard:
            await news.wait()

    with anyio.fail_after(30):
        async with AsyncExitStack() as stack:
            workers = [Worker(), Worker()]
            urls = []
            for worker in workers:
                store = RedisStore(redis_url, prefix=prefix, timeout=STORE_TIMEOUT)
                base = await stack.enter_async_context(serve_asgi(worker.server.http_app(store=store)))
                urls.append(base + "/mcp")
            router = Router([port_of(url) for url in urls])
            http_client = await stack.enter_async_context(httpx.AsyncClient(transport=router, timeout=20))
            http = await stack.enter_async_context(open_streamable_http(urls[0], http_client=http_client))
            client = Client("tester", "0.1", versions=("2025-11-25",))
            client.notification_handlers["notifications/tasks/status"] = on_status
            remote = await stack.enter_async_context(client.connect(http))
            for runs in range(2):  # a task started on each worker, cancelled on the other
                router.turn = runs
                started = await remote.start_tool("forever")
                await started.cancel()
                await until_heard(started.task_id, "cancelled")
                await workers[runs].stopped.wait()
            calls = [port for _, method, port in router.sent if method in ("tools/call", "tasks/cancel")]
            assert calls == [*router.ports, *reversed(router.ports)]
            for worker in workers:
                worker.gate.set()
            done = await remote.start_tool("slow", {"n": 1})
            await until_heard(done.task_id, "completed")
            assert (await done.result()).structured_content == {"result": 2}


async def test_a_lost_redis_fails_task_requests_clearly_and_the_workers_go_on(
    redis_server: RedisServer, redis_url: str
) -> None:
    """Redis stopped while a task runs: task requests get a clear error, the task's end that
    could not be recorded does not bring its worker down, and once Redis is back tasks work
    again (a Redis that restarted empty knows no task of before)."""
    with anyio.fail_after(60):
        async with two_workers(redis_url, timeout=1.0) as ((first, _), (on_first, on_second), _):
            started = await on_first.start_tool("slow", {"n": 1})
            redis_server.stop()
            try:
                with pytest.raises(McpError, match="Service unavailable: Redis at redis://"):
                    await ToolTask(on_second, started.task_id, 10).status()
                first.gate.set()  # its end cannot be recorded now
                with pytest.raises(McpError, match="Service unavailable: Redis at redis://"):
                    await on_first.start_tool("slow", {"n": 2})
            finally:
                redis_server.start()
            while True:  # (each worker connects again at its next command)
                try:
                    again = await on_first.start_tool("slow", {"n": 3})
                except McpError:
                    await anyio.sleep(0.05)
                    continue
                break
            assert (await ToolTask(on_second, again.task_id, 10).result()).structured_content == {"result": 6}
