"""A session's requests over stdio and memory: each runs in its own copy of the context the
session started in, and those already read when the input ends are still answered.

Over stdio the server is a child process, tests/peers/readme_server.py, started the way the
README does (``server.run_stdio_sync()``) and through ``mcpbind serve``, on the backend the test
runs on. Every wait is bounded.
"""

from __future__ import annotations

import contextvars
import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import anyio
import pytest
from anyio.streams.memory import MemoryObjectReceiveStream, MemoryObjectSendStream

from mcpbind.protocol.errors import CONNECTION_CLOSED
from mcpbind.runtime.session import RequestContext
from mcpbind.schema import v2025_11_25 as types
from mcpbind.server.server import Server
from mcpbind.transports.base import DEFAULT_MAX_MESSAGE_SIZE
from mcpbind.transports.memory import MemoryTransport
from mcpbind.transports.stdio import spawn_stdio_server
from tests.cli_harness import mcpbind_command
from tests.harness import child_env

pytestmark = pytest.mark.anyio

README_SERVER = Path(__file__).resolve().parents[1] / "peers" / "readme_server.py"
TEST_TIMEOUT = 30.0  # the most a whole test may take

user: contextvars.ContextVar[str] = contextvars.ContextVar("user", default="nobody")


def message(ident: object, method: str, params: dict[str, Any]) -> bytes:
    return json.dumps({"jsonrpc": "2.0", "id": ident, "method": method, "params": params}).encode()


INITIALIZE = message(
    0,
    "initialize",
    {"protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": {"name": "t", "version": "0"}},
)
INITIALIZED = b'{"jsonrpc":"2.0","method":"notifications/initialized"}'


def call(ident: int, tool: str, **arguments: Any) -> bytes:
    return message(ident, "tools/call", {"name": tool, "arguments": arguments})


def text(answer: dict[str, Any]) -> str:
    value: str = answer["result"]["content"][0]["text"]
    return value


LAUNCHERS = ["run_stdio_sync", "mcpbind serve"]


def command(launcher: str, backend: str) -> list[str]:
    if launcher == "run_stdio_sync":
        return [sys.executable, str(README_SERVER), backend]
    return mcpbind_command("serve", str(README_SERVER), "--backend", backend)


async def run_to_end(
    argv: list[str], lines: list[bytes], env: dict[str, str]
) -> tuple[list[dict[str, Any]], int]:
    """Start the server, write ``lines`` and close its stdin at once; everything it writes until
    it exits, and its exit status."""
    process = await anyio.open_process(
        argv, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, env=env
    )
    try:
        assert process.stdin is not None and process.stdout is not None
        await process.stdin.send(b"".join(line + b"\n" for line in lines))
        await process.stdin.aclose()
        output = bytearray()
        async for chunk in process.stdout:
            output += chunk
        returncode = await process.wait()
    finally:
        if process.returncode is None:
            process.kill()
        with anyio.CancelScope(shield=True):
            await process.aclose()
    return [json.loads(line) for line in output.splitlines() if line.strip()], returncode


def by_id(answers: list[dict[str, Any]]) -> dict[Any, dict[str, Any]]:
    found = {answer["id"]: answer for answer in answers}
    assert len(found) == len(answers), answers  # nothing answered twice
    return found


# --------------------------------------------------------------------------------------------
# Context variables (issue 11, item 2)
# --------------------------------------------------------------------------------------------

# Who each request saw and who it became: the first two run in line in the task that reads, the
# third waits (so another task takes over reading), the fourth runs in the task that took over.
BECOME = [("alice", False), ("bob", False), ("carol", True), ("dave", False)]


@pytest.mark.parametrize("launcher", LAUNCHERS)
async def test_stdio_requests_do_not_see_each_others_context_variables(
    anyio_backend: str, launcher: str
) -> None:
    with anyio.fail_after(TEST_TIMEOUT):
        argv = command(launcher, anyio_backend)
        async with spawn_stdio_server(
            argv[0], argv[1:], env=child_env(), stderr=subprocess.DEVNULL
        ) as transport:
            await transport.send(INITIALIZE)
            assert json.loads(await transport.receive())["id"] == 0
            await transport.send(INITIALIZED)
            seen = []
            for ident, (name, pause) in enumerate(BECOME, 1):
                await transport.send(call(ident, "become", name=name, pause=pause))
                answer = json.loads(await transport.receive())
                assert answer["id"] == ident
                seen.append(text(answer))
    # "root" was set at import, where the server started; no request sees another's name.
    assert seen == ["root"] * len(BECOME)


def become_server() -> Server:
    server = Server("context", "1.0")

    @server.tool()
    async def become(name: str, pause: bool = False) -> str:
        before = user.get()
        user.set(name)
        if pause:
            await anyio.sleep(0.01)
        return before

    @server.tool()
    async def nap(seconds: float) -> str:
        await anyio.sleep(seconds)
        return "rested"

    return server


class Peer:
    """The client's side of a memory transport to a server, as raw streams: the test can close
    its sending side alone, as a stdio client closes the server's stdin."""

    def __init__(self) -> None:
        self.outgoing: MemoryObjectSendStream[bytes]
        server_in: MemoryObjectReceiveStream[bytes]
        server_out: MemoryObjectSendStream[bytes]
        self.incoming: MemoryObjectReceiveStream[bytes]
        self.outgoing, server_in = anyio.create_memory_object_stream[bytes](1024)
        server_out, self.incoming = anyio.create_memory_object_stream[bytes](1024)
        self.transport = MemoryTransport(server_out, server_in, DEFAULT_MAX_MESSAGE_SIZE)

    async def send(self, *lines: bytes) -> None:
        for line in lines:
            await self.outgoing.send(line)

    async def receive(self) -> dict[str, Any]:
        answer: dict[str, Any] = json.loads(await self.incoming.receive())
        return answer

    async def rest(self) -> list[dict[str, Any]]:
        """Everything the server sends until it closes its side."""
        return [json.loads(line) async for line in self.incoming]


async def test_memory_requests_do_not_see_each_others_context_variables() -> None:
    server = become_server()
    peer = Peer()
    with anyio.fail_after(TEST_TIMEOUT):
        user.set("root")  # in the context the session starts in
        async with anyio.create_task_group() as tg:
            tg.start_soon(server.run, peer.transport)
            await peer.send(INITIALIZE)
            assert (await peer.receive())["id"] == 0
            await peer.send(INITIALIZED)
            seen = []
            for ident, (name, pause) in enumerate(BECOME, 1):
                await peer.send(call(ident, "become", name=name, pause=pause))
                answer = await peer.receive()
                assert answer["id"] == ident
                seen.append(text(answer))
            await peer.outgoing.aclose()
    assert seen == ["root"] * len(BECOME)
    assert user.get() == "root"  # nor does the task that started the session


async def test_notification_handlers_do_not_see_each_others_context_variables() -> None:
    server = become_server()
    seen: list[str] = []

    @server.on_notification(types.methods.NOTIFICATIONS_ROOTS_LIST_CHANGED)
    async def roots_changed(params: types.NotificationParams, ctx: RequestContext) -> None:
        seen.append(user.get())
        user.set("changed")

    peer = Peer()
    with anyio.fail_after(TEST_TIMEOUT):
        user.set("root")
        async with anyio.create_task_group() as tg:
            tg.start_soon(server.run, peer.transport)
            await peer.send(INITIALIZE)
            assert (await peer.receive())["id"] == 0
            note = b'{"jsonrpc":"2.0","method":"notifications/roots/list_changed"}'
            await peer.send(INITIALIZED, note, note, call(1, "become", name="x"))
            answer = await peer.receive()
            await peer.outgoing.aclose()
    assert seen == ["root", "root"]
    assert text(answer) == "root"


# --------------------------------------------------------------------------------------------
# The end of input (issue 11, item 3)
# --------------------------------------------------------------------------------------------

NAPS = 50


@pytest.mark.parametrize("launcher", LAUNCHERS)
async def test_stdio_requests_read_before_stdin_closed_are_answered(
    anyio_backend: str, launcher: str
) -> None:
    lines = [INITIALIZE, INITIALIZED, *(call(n, "nap", seconds=0.2) for n in range(1, NAPS + 1))]
    with anyio.fail_after(TEST_TIMEOUT):
        answers, returncode = await run_to_end(command(launcher, anyio_backend), lines, child_env())
    answered = by_id(answers)
    assert sorted(answered) == list(range(NAPS + 1))
    assert all(text(answered[n]) == "rested" for n in range(1, NAPS + 1))
    assert returncode == 0


async def test_stdio_requests_past_the_grace_period_are_answered_with_an_error(anyio_backend: str) -> None:
    lines = [INITIALIZE, INITIALIZED, call(1, "nap", seconds=0.05), call(2, "nap", seconds=60)]
    lines.append(call(3, "nap", seconds=60))
    env = {**child_env(), "MCPBIND_TEST_GRACE": "0.5"}
    with anyio.fail_after(TEST_TIMEOUT):  # far less than the 60 s naps
        answers, returncode = await run_to_end(command("run_stdio_sync", anyio_backend), lines, env)
    answered = by_id(answers)
    assert sorted(answered) == [0, 1, 2, 3]
    assert text(answered[1]) == "rested"
    for ident in (2, 3):
        assert answered[ident]["error"]["code"] == CONNECTION_CLOSED, answered[ident]
    assert returncode == 0


async def test_memory_requests_read_before_the_input_ended_are_answered() -> None:
    server = become_server()
    peer = Peer()
    with anyio.fail_after(TEST_TIMEOUT):
        async with anyio.create_task_group() as tg:
            tg.start_soon(server.run, peer.transport)
            await peer.send(
                INITIALIZE, INITIALIZED, *(call(n, "nap", seconds=0.2) for n in range(1, NAPS + 1))
            )
            await peer.outgoing.aclose()
            answers = await peer.rest()  # until the server closes its side, having answered
    answered = by_id(answers)
    assert sorted(answered) == list(range(NAPS + 1))
    assert all(text(answered[n]) == "rested" for n in range(1, NAPS + 1))


async def test_memory_requests_past_the_grace_period_are_answered_with_an_error() -> None:
    server = become_server()
    server.shutdown_grace_period = 0.3
    peer = Peer()
    with anyio.fail_after(TEST_TIMEOUT):
        async with anyio.create_task_group() as tg:
            tg.start_soon(server.run, peer.transport)
            await peer.send(INITIALIZE, INITIALIZED, call(1, "nap", seconds=0.01), call(2, "nap", seconds=60))
            await peer.outgoing.aclose()
            answers = await peer.rest()
    answered = by_id(answers)
    assert sorted(answered) == [0, 1, 2]
    assert text(answered[1]) == "rested"
    assert answered[2]["error"]["code"] == CONNECTION_CLOSED
