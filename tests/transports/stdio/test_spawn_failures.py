"""Starting a stdio server that fails: a command that does not exist, a working directory that
does not exist, a file that cannot be run, a process that exits at once or closes its stdout.
The caller gets a clear error (the OS's for a spawn that fails, McpError for a session that
cannot start), the child is reaped, and no file descriptor is left open, whether the client
reads pipes of its own or the backend's process streams. On asyncio and trio."""

from __future__ import annotations

import os
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import anyio
import pytest

from mcpbind.client.client import Client
from mcpbind.protocol.errors import CONNECTION_CLOSED, McpError
from mcpbind.transports.stdio import process as stdio_process
from mcpbind.transports.stdio import spawn_stdio_server
from mcpbind.versions import HANDSHAKE_VERSIONS

pytestmark = [
    pytest.mark.anyio,
    pytest.mark.skipif(not Path("/proc/self/fd").is_dir(), reason="counts descriptors in /proc/self/fd"),
]

TIMEOUT = 15.0


@pytest.fixture(params=[True, False], ids=["own-pipes", "backend-streams"])
def own_pipes(request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch) -> bool:
    own: bool = request.param
    if own and not stdio_process._OWN_PIPES:
        pytest.skip("this platform uses the backend's process streams")
    monkeypatch.setattr(stdio_process, "_OWN_PIPES", own)
    return own


def open_descriptors() -> set[str]:
    return set(os.listdir("/proc/self/fd"))


@contextmanager
def no_descriptor_left() -> Iterator[None]:
    """Fails when the block leaves a descriptor open that was not open before it."""
    before = open_descriptors()
    yield
    left = open_descriptors() - before
    # (the listing itself opens one, closed again by the time it is compared)
    assert not {fd for fd in left if os.path.exists(f"/proc/self/fd/{fd}")}, left


def python(code: str) -> tuple[str, list[str]]:
    return sys.executable, ["-c", code]


async def test_a_command_that_does_not_exist(own_pipes: bool, tmp_path: Path) -> None:
    missing = tmp_path / "no-such-server"
    with no_descriptor_left(), anyio.fail_after(TIMEOUT):
        for _ in range(20):  # a leak of even one descriptor per attempt shows
            with pytest.raises(FileNotFoundError) as info:
                async with spawn_stdio_server(missing):
                    raise AssertionError("started")
            assert str(missing) in str(info.value)  # the error names what could not be started


async def test_a_working_directory_that_does_not_exist(own_pipes: bool, tmp_path: Path) -> None:
    command, args = python("pass")
    with no_descriptor_left(), anyio.fail_after(TIMEOUT), pytest.raises(FileNotFoundError):
        async with spawn_stdio_server(command, args, cwd=tmp_path / "gone"):
            raise AssertionError("started")


async def test_a_command_that_cannot_be_run(own_pipes: bool, tmp_path: Path) -> None:
    # A directory: no one may execute it, root included.
    with no_descriptor_left(), anyio.fail_after(TIMEOUT), pytest.raises(PermissionError):
        async with spawn_stdio_server(tmp_path):
            raise AssertionError("started")


async def test_connect_stdio_to_a_command_that_does_not_exist(own_pipes: bool, tmp_path: Path) -> None:
    with no_descriptor_left(), anyio.fail_after(TIMEOUT), pytest.raises(FileNotFoundError):
        async with Client(versions=HANDSHAKE_VERSIONS).connect_stdio(str(tmp_path / "no-such-server")):
            raise AssertionError("connected")


@pytest.mark.parametrize(
    "code",
    [
        "import sys; sys.exit(3)",
        "import sys; sys.stdout.write('not a server\\n'); sys.exit(0)",
        "import os, time; os.close(1); time.sleep(60)",  # stdout closed, the process lives on
    ],
    ids=["exits-at-once", "writes-garbage-and-exits", "closes-stdout"],
)
async def test_a_process_that_is_no_server_fails_the_connect(own_pipes: bool, code: str) -> None:
    command, args = python(code)
    with no_descriptor_left(), anyio.fail_after(TIMEOUT):
        async with spawn_stdio_server(command, args, close_timeout=0.5, terminate_timeout=2) as transport:
            with pytest.raises(McpError) as info:
                async with Client(versions=HANDSHAKE_VERSIONS).connect(transport, timeout=TIMEOUT):
                    raise AssertionError("connected")
        # The child was reaped (killed if it lived on without its stdout).
        assert transport.returncode is not None
    assert info.value.code == CONNECTION_CLOSED


async def test_a_server_that_dies_during_the_session_leaves_nothing_open(own_pipes: bool) -> None:
    # A server that answers initialize, then exits: the next call fails with a clear error.
    code = (
        "import json, sys\n"
        "line = json.loads(sys.stdin.readline())\n"
        "result = {'protocolVersion': line['params']['protocolVersion'], 'capabilities': {},"
        " 'serverInfo': {'name': 'brief', 'version': '1'}}\n"
        "print(json.dumps({'jsonrpc': '2.0', 'id': line['id'], 'result': result}), flush=True)\n"
        "sys.stdin.readline()\n"  # notifications/initialized; then it exits
    )
    command, args = python(code)
    with no_descriptor_left(), anyio.fail_after(TIMEOUT):
        async with Client(versions=HANDSHAKE_VERSIONS).connect_stdio(command, args) as server:
            assert server.server_info.name == "brief"
            with pytest.raises(McpError) as info:
                await server.list_tools()
    assert info.value.code == CONNECTION_CLOSED
