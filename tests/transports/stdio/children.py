"""Server child processes for the stdio session tests: where the servers are, the environment
they need, and :class:`Raw`, hand-written lines to a server and the lines it writes back.

Used by test_sessions.py and test_hostile.py (and ``child_env`` by test_process.py).
"""

from __future__ import annotations

import json
import os
import sys
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import anyio

import mcpbind
from mcpbind.transports.stdio import StdioClientTransport, spawn_stdio_server

ROOT = Path(__file__).resolve().parents[3]  # the repository
ECHO_SERVER = ROOT / "examples" / "echo_server.py"
SESSION_SERVER = ROOT / "tests" / "peers" / "session_server.py"
SCRIPTED_SERVER = ROOT / "tests" / "peers" / "scripted_server.py"

TEST_TIMEOUT = 60.0  # the most a whole test may take
REPLY_TIMEOUT = 5.0  # the most one expected message may take
# The most the first message may take: it waits for the child's start-up (Python, mcpbind's imports,
# coverage under `nox -s tests`), which takes seconds on a loaded machine.
START_TIMEOUT = 30.0

INITIALIZE = json.dumps(
    {
        "jsonrpc": "2.0",
        "id": "init",
        "method": "initialize",
        "params": {
            "protocolVersion": "2025-11-25",
            "capabilities": {},
            "clientInfo": {"name": "raw-test", "version": "0"},
        },
    }
).encode()
INITIALIZED = b'{"jsonrpc":"2.0","method":"notifications/initialized"}'


def child_env() -> dict[str, str]:
    """PYTHONPATH for a child to import mcpbind as this test does (a source checkout)."""
    roots = dict.fromkeys(str(Path(entry).resolve().parent) for entry in mcpbind.__path__)
    inherited = os.environ.get("PYTHONPATH")
    return {"PYTHONPATH": os.pathsep.join([*roots, *([inherited] if inherited else [])])}


def request(ident: object, method: str, params: object = None) -> bytes:
    message: dict[str, object] = {"jsonrpc": "2.0", "id": ident, "method": method}
    if params is not None:
        message["params"] = params
    return json.dumps(message).encode()


def call(ident: object, name: str, **arguments: object) -> bytes:
    return request(ident, "tools/call", {"name": name, "arguments": arguments})


def cancelled(ident: object) -> bytes:
    params = {"requestId": ident, "reason": "test"}
    return json.dumps({"jsonrpc": "2.0", "method": "notifications/cancelled", "params": params}).encode()


class Raw:
    """Hand-written lines to a server over a real pipe, and the lines it writes back."""

    def __init__(self, transport: StdioClientTransport, reply_timeout: float = REPLY_TIMEOUT) -> None:
        self.transport = transport
        self.reply_timeout = reply_timeout
        self._pings = 0
        self._started = False  # a message came: the child has started

    async def send(self, *lines: bytes) -> None:
        for line in lines:
            await self.transport.send(line)

    async def receive(self) -> dict[str, Any]:
        with anyio.fail_after(self.reply_timeout if self._started else START_TIMEOUT):
            line = await self.transport.receive()
        self._started = True
        message = json.loads(line)
        assert isinstance(message, dict), line
        return message

    async def initialize(self) -> dict[str, Any]:
        await self.send(INITIALIZE)
        answer = await self.receive()
        assert answer["id"] == "init" and "result" in answer, answer
        await self.send(INITIALIZED)
        return answer

    async def exchange(self, *lines: bytes, answers: int | None = 0) -> list[dict[str, Any]]:
        """Send ``lines`` then a ping; the messages that came back besides the ping's answer.

        Waits for the ping's answer and ``answers`` other messages (a handler's answer may
        come after the ping's, which the session answers at once), and fails if more came.
        ``answers=None``: whatever came before the ping's answer, however many.
        """
        self._pings += 1
        ping_id = f"ping-{self._pings}"
        await self.send(*lines, request(ping_id, "ping"))
        others: list[dict[str, Any]] = []
        pinged = False
        while not pinged or (answers is not None and len(others) < answers):
            message = await self.receive()
            if message.get("id") == ping_id:
                assert message == {"jsonrpc": "2.0", "id": ping_id, "result": {}}
                pinged = True
            else:
                others.append(message)
        assert answers is None or len(others) == answers, others
        return others

    async def error_for(self, line: bytes) -> dict[str, Any]:
        """The one error response to ``line``; the server still answers a ping after it."""
        [answer] = await self.exchange(line, answers=1)
        assert answer["jsonrpc"] == "2.0"
        assert "result" not in answer, answer
        assert set(answer) == {"jsonrpc", "id", "error"}, answer
        error: dict[str, Any] = answer["error"]
        assert isinstance(error["code"], int) and isinstance(error["message"], str)
        return answer


@asynccontextmanager
async def raw_server(
    script: Path, *args: str, stderr_path: Path | None = None, close_timeout: float = 2.0
) -> AsyncIterator[Raw]:
    with (
        open(stderr_path or os.devnull, "w") as stderr,
        anyio.fail_after(TEST_TIMEOUT),
    ):
        async with spawn_stdio_server(
            sys.executable, [str(script), *args], env=child_env(), stderr=stderr, close_timeout=close_timeout
        ) as transport:
            yield Raw(transport)


def marks(marker: Path) -> list[str]:
    return marker.read_text().splitlines() if marker.exists() else []


async def wait_for_mark(marker: Path, line: str) -> None:
    with anyio.fail_after(REPLY_TIMEOUT):
        while line not in marks(marker):
            await anyio.sleep(0.01)
