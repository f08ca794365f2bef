"""Clients through a load balancer (issue 16): three ``mcpbind serve --store`` processes of
tests/interop/fleet_server.py sharing one Redis behind nginx, a plain round-robin with no
affinity (tests/fleet.py, started once for the module; the servers run on asyncio, the clients
on the test's backend). Each request may reach another worker; the clients do not notice.

* The official SDK's client (``mcp.Client``) in 2025 mode (``mode="legacy"``: initialize, one
  session) and in 2026-07-28 mode (``mode="2026-07-28"``: stateless, no handshake): sampling,
  elicitation and progress; subscriptions (2025: ``resources/subscribe`` and the GET stream;
  2026: ``subscriptions/listen``) hearing a change raised on another worker while listening.
* mcpbind's own client, the same in both modes.
"""

from __future__ import annotations

import re
import warnings
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any, Literal

import anyio
import pytest

pytest.importorskip("mcp")

import mcp
import mcp.types
import mcp_types
import pydantic
from mcp.client.extension import ClaimContext, ClientExtension, ResultClaim
from mcp.client.session import ClientRequestContext
from mcp.shared.subscriptions import ResourceUpdated, ToolsListChanged

from mcpbind import types
from mcpbind.client.client import Client
from mcpbind.client.subscriptions import ResourceUpdated as OurResourceUpdated
from mcpbind.client.subscriptions import TaskChanged as OurTaskChanged
from mcpbind.client.subscriptions import ToolsListChanged as OurToolsListChanged
from mcpbind.protocol.tasks import TASKS_EXTENSION as TASKS
from tests.fleet import Fleet, running_fleet

pytestmark = pytest.mark.anyio

SERVER = str(Path(__file__).parent / "fleet_server.py")
WATCHED = "test://watched"
OLD = "2025-11-25"
MODERN = "2026-07-28"
TIMEOUT = 30.0
_PID = re.compile(r"\(pid (\d+)\)$")


@pytest.fixture(scope="module")
def fleet(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Fleet]:
    with running_fleet(tmp_path_factory.mktemp("fleet"), SERVER) as running:
        yield running


def pid_of(text: str) -> int:
    found = _PID.search(text)
    assert found, text
    return int(found.group(1))


async def get_stream_opened(fleet: Fleet, before: set[str]) -> None:
    """Until a new GET stream is held by a worker (it listens on its session's channel
    ``mcpbind:to:ID``: what other workers relay for the stream reaches it from then on)."""
    while not fleet.redis.channels("mcpbind:to:*") - before:
        await anyio.sleep(0.02)


# -- the official SDK's client ---------------------------------------------------------------


async def official_sampling(
    context: ClientRequestContext, params: mcp.types.CreateMessageRequestParams
) -> mcp.types.CreateMessageResult:
    content = mcp.types.TextContent(type="text", text="a summary")
    return mcp.types.CreateMessageResult(role="assistant", content=content, model="test-model")


async def official_elicitation(
    context: ClientRequestContext, params: mcp.types.ElicitRequestParams
) -> mcp.types.ElicitResult:
    return mcp.types.ElicitResult(action="accept", content={"name": "Ada"})


def official_text(result: mcp.types.CallToolResult) -> str:
    assert not result.is_error, result
    return "".join(block.text for block in result.content if isinstance(block, mcp.types.TextContent))


async def official_calls(session: mcp.Client) -> set[int]:
    """Sampling, elicitation and progress through the balancer; the pids that answered."""
    pids = set()
    for _ in range(2):  # (the next of each on another worker)
        summary = official_text(await session.call_tool("summarize", {"text": "a long text"}))
        assert summary.startswith("a summary (pid ")
        greeting = official_text(await session.call_tool("greet", {}))
        assert greeting.startswith("hello Ada (pid ")
        pids |= {pid_of(summary), pid_of(greeting)}
    reported: list[float] = []

    async def on_progress(progress: float, total: float | None, message: str | None) -> None:
        reported.append(progress)

    counted = official_text(await session.call_tool("count", {"steps": 3}, progress_callback=on_progress))
    assert counted.startswith("counted 3 (pid ") and reported == [1, 2, 3]
    return pids | {pid_of(counted)}


async def test_the_official_client_in_a_2025_session(fleet: Fleet) -> None:
    heard: list[Any] = []
    changed = anyio.Event()

    async def on_message(message: Any) -> None:
        if isinstance(message, mcp.types.ToolListChangedNotification | mcp.types.ResourceUpdatedNotification):
            heard.append(message)
            if len(heard) == 2:
                changed.set()

    before = fleet.redis.channels("mcpbind:to:*")
    client = mcp.Client(
        fleet.url,
        mode="legacy",
        sampling_callback=official_sampling,
        elicitation_callback=official_elicitation,
        message_handler=on_message,
        read_timeout_seconds=TIMEOUT,
    )
    with anyio.fail_after(TIMEOUT):
        async with client as session:
            assert session.protocol_version == OLD
            pids = await official_calls(session)
            with warnings.catch_warnings():
                warnings.simplefilter("ignore", mcp.MCPDeprecationWarning)
                await session.subscribe_resource(WATCHED)
            await get_stream_opened(fleet, before)
            pids.add(pid_of(official_text(await session.call_tool("change", {}))))
            await changed.wait()
    assert {type(message) for message in heard} == {
        mcp.types.ToolListChangedNotification,
        mcp.types.ResourceUpdatedNotification,
    }
    assert len(pids) > 1, "one worker answered every request"


async def test_the_official_client_in_2026_mode(fleet: Fleet) -> None:
    client = mcp.Client(
        fleet.url,
        mode=MODERN,
        sampling_callback=official_sampling,
        elicitation_callback=official_elicitation,
        read_timeout_seconds=TIMEOUT,
    )
    with anyio.fail_after(TIMEOUT):
        async with client as session:
            assert session.protocol_version == MODERN
            pids = await official_calls(session)
            async with session.listen(tools_list_changed=True, resource_subscriptions=[WATCHED]) as changes:
                for _ in range(2):  # (the second raised on another worker than the first)
                    pids.add(pid_of(official_text(await session.call_tool("change", {}))))
                    kinds: set[type] = set()
                    async for event in changes:
                        kinds.add(type(event))
                        if kinds >= {ToolsListChanged, ResourceUpdated}:
                            break
    assert len(pids) > 1, "one worker answered every request"


# -- mcpbind's client ------------------------------------------------------------------------


async def our_sampling(params: types.CreateMessageRequestParams, ctx: Any) -> types.CreateMessageResult:
    return types.CreateMessageResult(
        role="assistant", content=types.TextContent(text="a summary"), model="test"
    )


async def our_elicitation(params: Any, ctx: Any) -> types.ElicitResult:
    return types.ElicitResult(action="accept", content={"name": "Ada"})


def our_text(result: Any) -> str:
    assert result.is_error is not True, result
    return "".join(getattr(block, "text", "") for block in result.content)


async def our_calls(server: Any) -> set[int]:
    pids = set()
    for _ in range(2):
        summary = our_text(await server.call_tool("summarize", {"text": "a long text"}))
        assert summary.startswith("a summary (pid ")
        greeting = our_text(await server.call_tool("greet", {}))
        assert greeting.startswith("hello Ada (pid ")
        pids |= {pid_of(summary), pid_of(greeting)}
    progress: list[float] = []

    async def on_progress(done: float, total: float | None, message: str | None) -> None:
        progress.append(done)

    counted = our_text(await server.call_tool("count", {"steps": 3}, progress=on_progress))
    assert counted.startswith("counted 3 (pid ") and progress == [1, 2, 3]
    return pids | {pid_of(counted)}


async def test_mcpbinds_client_in_a_2025_session(fleet: Fleet) -> None:
    heard: list[str] = []
    changed = anyio.Event()

    def hearing(method: str) -> Any:
        async def on_notification(params: Any, ctx: Any) -> None:
            heard.append(method)
            if len(heard) == 2:
                changed.set()

        return on_notification

    handlers = {
        method: hearing(method)
        for method in ("notifications/tools/list_changed", "notifications/resources/updated")
    }
    client = Client(
        protocol_version=OLD,
        sampling=our_sampling,
        elicitation=our_elicitation,
        notification_handlers=handlers,
    )
    before = fleet.redis.channels("mcpbind:to:*")
    with anyio.fail_after(TIMEOUT):
        async with client.connect_url(fleet.url, transport="streamable-http") as server:
            assert server.protocol_version == OLD
            pids = await our_calls(server)
            await server.subscribe_resource(WATCHED)
            await get_stream_opened(fleet, before)
            pids.add(pid_of(our_text(await server.call_tool("change", {}))))
            await changed.wait()
    assert sorted(heard) == ["notifications/resources/updated", "notifications/tools/list_changed"]
    assert len(pids) > 1, "one worker answered every request"


async def test_mcpbinds_client_in_2026_mode(fleet: Fleet) -> None:
    client = Client(protocol_version=MODERN, sampling=our_sampling, elicitation=our_elicitation)
    with anyio.fail_after(TIMEOUT):
        async with client.connect_url(fleet.url, transport="streamable-http") as server:
            assert server.stateless
            pids = await our_calls(server)
            async with server.listen(tools=True, resource_uris=[WATCHED]) as changes:
                for _ in range(2):  # (the second raised on another worker than the first)
                    pids.add(pid_of(our_text(await server.call_tool("change", {}))))
                    got = {await changes.next(10), await changes.next(10)}
                    assert got == {OurToolsListChanged(), OurResourceUpdated(WATCHED)}
    assert len(pids) > 1, "one worker answered every request"


# -- tasks ----------------------------------------------------------------------------------
# A task started through the balancer runs on the worker that took the call; tasks/get,
# tasks/update and tasks/result land on the others (round-robin: of three requests in a row,
# one per worker), which read and write its record in Redis.


async def test_mcpbinds_client_follows_tasks_across_workers_in_2026_mode(fleet: Fleet) -> None:
    client = Client(protocol_version=MODERN, elicitation=our_elicitation)
    with anyio.fail_after(TIMEOUT):
        async with client.connect_url(fleet.url, transport="streamable-http") as server:
            task = await server.start_tool("double", {"n": 21})
            assert task.task_id is not None
            # One tasks/get per worker: each reads the task from Redis.
            states = [await task.status() for _ in fleet.servers]
            assert {state.task_id for state in states} == {task.task_id}
            assert our_text(await task.result()).startswith("doubled 42 (pid ")
            # A task asking for input: tasks/get sees input_required on one worker, the
            # answer (tasks/update) reaches the task's worker from another.
            asking = await server.start_tool("greet_later")
            assert asking.task_id is not None
            answered = our_text(await asking.result())
            assert answered.startswith("hello Ada (pid ")
            assert pid_of(answered) in fleet.pids
            # Followed on a listen stream (held by one worker, told of the changes made on
            # the task's worker through Redis), tasks/update landing on yet another.
            listened = await server.start_tool("greet_later")
            assert listened.task_id is not None
            async with server.listen(task_ids=[listened.task_id]) as changes:
                assert changes.acknowledged.task_ids == [listened.task_id]
                told = await changes.next(10)
                assert isinstance(told, OurTaskChanged) and told.task.task_id == listened.task_id
            assert our_text(await listened.result(listen=True)).startswith("hello Ada (pid ")


async def test_mcpbinds_client_follows_a_task_across_workers_in_a_2025_session(fleet: Fleet) -> None:
    client = Client(protocol_version=OLD, elicitation=our_elicitation)
    with anyio.fail_after(TIMEOUT):
        async with client.connect_url(fleet.url, transport="streamable-http") as server:
            assert server.protocol_version == OLD
            task = await server.start_tool("double", {"n": 4}, ttl_ms=60_000)
            assert task.task_id is not None
            states = [await task.status() for _ in fleet.servers]
            assert {state.task_id for state in states} == {task.task_id}
            assert our_text(await task.result()).startswith("doubled 8 (pid ")


# The official SDK (mcp 2.3.0) has no tasks client of its own: no tasks/get, tasks/update or
# TaskMetadata anywhere in mcp/client (mcp/server/extension.py names tasks/get only as an
# example of an extension's method). What it has is a generic client extension
# (mcp.client.extension.ClientExtension): an identifier it declares in the capabilities every
# 2026-07-28 request carries, and result claims (ResultClaim) finishing a tools/call result of
# another resultType. The tasks extension is written here on that: a claim on resultType
# "task" whose resolver follows the task with tasks/get (and answers input_required with
# tasks/update), sent as plain requests through the session's send_request.
#
# Its 2025 mode (mode="legacy") is not tested with tasks: 2025-11-25's task-augmented
# tools/call cannot go through it. ClientSession.send_request validates every result against
# the negotiated version's row of mcp_types.methods.SERVER_RESULTS, which for
# ("tools/call", "2025-11-25") is that version's CallToolResult (content required): the
# CreateTaskResult ({"task": {...}}) fails with a pydantic ValidationError, and the session's
# call_tool has no task parameter. (tasks/get has no row there: it would pass unvalidated.)


class OfficialCreatedTask(mcp_types.Result):
    """A tools/call answered with a task (the tasks extension's CreateTaskResult)."""

    result_type: Literal["task"] = "task"
    task_id: str
    status: str
    poll_interval_ms: int | None = None


class OfficialTaskParams(mcp_types.RequestParams):
    task_id: str
    input_responses: dict[str, Any] | None = None


class OfficialTaskState(mcp_types.Result):
    """tasks/get's answer (a DetailedTask), the members the test reads."""

    model_config = pydantic.ConfigDict(extra="allow")
    task_id: str
    status: str
    result: dict[str, Any] | None = None
    input_requests: dict[str, Any] | None = None


class OfficialGetTask(mcp_types.Request[OfficialTaskParams, Literal["tasks/get"]]):
    method: Literal["tasks/get"] = "tasks/get"
    name_param = "taskId"


class OfficialUpdateTask(mcp_types.Request[OfficialTaskParams, Literal["tasks/update"]]):
    method: Literal["tasks/update"] = "tasks/update"
    name_param = "taskId"


class OfficialTasks(ClientExtension):
    """The tasks extension for the official client: follows a task to its end, answering
    an elicitation with the name Ada; counts the tasks/get it sent."""

    identifier = TASKS

    def __init__(self) -> None:
        self.polls = 0

    def claims(self) -> Sequence[ResultClaim[Any]]:
        return [ResultClaim(result_type="task", model=OfficialCreatedTask, resolve=self.follow)]

    async def follow(self, created: OfficialCreatedTask, ctx: ClaimContext) -> mcp.types.CallToolResult:
        answered: set[str] = set()
        while True:
            self.polls += 1
            state = await ctx.session.send_request(
                OfficialGetTask(params=OfficialTaskParams(task_id=created.task_id)), OfficialTaskState
            )
            if state.status == "completed":
                assert state.result is not None
                return mcp.types.CallToolResult.model_validate(state.result)
            assert state.status in ("working", "input_required"), state
            fresh = {key: asked for key, asked in (state.input_requests or {}).items() if key not in answered}
            if fresh:
                assert all(asked["method"] == "elicitation/create" for asked in fresh.values()), fresh
                responses = {key: {"action": "accept", "content": {"name": "Ada"}} for key in fresh}
                params = OfficialTaskParams(task_id=created.task_id, input_responses=responses)
                await ctx.session.send_request(OfficialUpdateTask(params=params), mcp_types.Result)
                answered.update(fresh)
            await anyio.sleep((created.poll_interval_ms or 20) / 1000)


async def test_the_official_client_follows_tasks_across_workers_in_2026_mode(fleet: Fleet) -> None:
    tasks = OfficialTasks()
    client = mcp.Client(
        fleet.url,
        mode=MODERN,
        extensions=[tasks],
        elicitation_callback=official_elicitation,  # (declares elicitation; the claim answers)
        read_timeout_seconds=TIMEOUT,
    )
    with anyio.fail_after(TIMEOUT):
        async with client as session:
            assert session.protocol_version == MODERN
            doubled = official_text(await session.call_tool("double", {"n": 21}))
            assert doubled.startswith("doubled 42 (pid ")
            assert tasks.polls >= 1, "the call was answered at once, not as a task"
            polls = tasks.polls
            greeting = official_text(await session.call_tool("greet_later", {}))
            assert greeting.startswith("hello Ada (pid ")
            assert tasks.polls > polls
