"""Whole MCP sessions over the stdio thread fallback (fdthreads.py), which serves what the event
loop cannot poll: a server and a client in this process over OS pipes with polling turned off,
and a server child whose stdin and stdout are regular files (``server < requests > answers``).
On asyncio and trio, the server child on both too."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import anyio
import pytest

from mcpbind.client.client import Client
from mcpbind.schema import v2025_11_25 as types
from mcpbind.server.server import Server
from mcpbind.transports.stdio import fdio, stdio_server_transport
from mcpbind.transports.stdio.fdthreads import ThreadedReader, ThreadedWriter
from mcpbind.versions import HANDSHAKE_VERSIONS
from tests.transports.stdio.children import ECHO_SERVER, INITIALIZE, INITIALIZED, call, child_env
from tests.transports.stdio.test_fdio import crossed_pipes

pytestmark = pytest.mark.anyio

TIMEOUT = 20.0


class Made:
    """How many readers and writers of the thread fallback were made."""

    readers = 0
    writers = 0


@pytest.fixture
def threads_only(monkeypatch: pytest.MonkeyPatch) -> type[Made]:
    """No descriptor is polled; the fallback's readers and writers are counted."""

    class CountedReader(ThreadedReader):
        def __init__(self, fd: int, read_size: int) -> None:
            Made.readers += 1
            super().__init__(fd, read_size)

    class CountedWriter(ThreadedWriter):
        def __init__(self, fd: int) -> None:
            Made.writers += 1
            super().__init__(fd)

    Made.readers = Made.writers = 0
    monkeypatch.setattr(fdio, "_pollable", lambda fd: False)
    monkeypatch.setattr(fdio, "ThreadedReader", CountedReader)
    monkeypatch.setattr(fdio, "ThreadedWriter", CountedWriter)
    return Made


def echo_server() -> Server:
    server = Server("threads", "1.0")

    @server.tool()
    def echo(text: str) -> str:
        return text

    return server


async def test_a_session_over_pipes_served_by_threads(threads_only: type[Made]) -> None:
    large = "x" * 1_000_000  # many reads and writes of the threads, one message
    with crossed_pipes() as pipes, anyio.fail_after(TIMEOUT):
        async with (
            stdio_server_transport(stdin=pipes.a_in, stdout=pipes.a_out) as server_end,
            stdio_server_transport(stdin=pipes.b_in, stdout=pipes.b_out) as client_end,
            anyio.create_task_group() as tg,
        ):
            tg.start_soon(echo_server().run, server_end)
            async with Client("tester", "1.0", versions=HANDSHAKE_VERSIONS).connect(client_end) as remote:
                assert remote.server_info.name == "threads"
                assert [tool.name for tool in (await remote.list_tools()).tools] == ["echo"]
                results = []
                async with anyio.create_task_group() as calls:  # concurrent calls, in flight together

                    async def one(text: str) -> None:
                        results.append(await remote.call_tool("echo", {"text": text}))

                    for text in ("a", large, "b"):
                        calls.start_soon(one, text)
                texts = sorted(
                    block.text for r in results for block in r.content if isinstance(block, types.TextContent)
                )
                assert texts == sorted(["a", large, "b"])
                await remote.ping()
            pipes.close(pipes.b_out)  # the client is gone: the server sees the end of its input
    assert threads_only.readers == 2 and threads_only.writers == 2


@pytest.mark.parametrize("server_backend", ["asyncio", "trio"])
def test_a_server_child_reading_and_writing_regular_files(server_backend: str, tmp_path: Path) -> None:
    requests = tmp_path / "requests.jsonl"
    requests.write_bytes(
        b"\n".join(
            [
                INITIALIZE,
                INITIALIZED,
                call(1, "echo", text="from a file"),
                call(2, "echo", text="y" * 200_000),
            ]
        )
        + b"\n"
    )
    answers = tmp_path / "answers.jsonl"
    with requests.open("rb") as stdin, answers.open("wb") as stdout:
        done = subprocess.run(
            [sys.executable, str(ECHO_SERVER), "--backend", server_backend],
            stdin=stdin,
            stdout=stdout,
            stderr=subprocess.PIPE,
            env={**os.environ, **child_env()},
            timeout=TIMEOUT,
            check=False,
        )
    assert done.returncode == 0, done.stderr  # it ended at the end of its input, quietly
    lines: list[dict[str, Any]] = [json.loads(line) for line in answers.read_bytes().splitlines()]
    assert [line["id"] for line in lines] == ["init", 1, 2]
    assert lines[1]["result"]["content"] == [{"type": "text", "text": "from a file"}]
    assert lines[2]["result"]["content"] == [{"type": "text", "text": "y" * 200_000}]
