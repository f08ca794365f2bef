"""Hostile input over real stdio pipes (see tests/test_hostile_input.py for the codec): lines
starting with ``[`` that are not JSON. A server answers each -32700, writes no traceback and
goes on.

Servers are child processes on both backends (``server_backend``); this side runs on both too.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from mcpbind.errors import PARSE_ERROR
from tests.test_stdio_session import ECHO_SERVER, raw_server

pytestmark = pytest.mark.anyio


@pytest.fixture(params=["asyncio", "trio"])
def server_backend(request: pytest.FixtureRequest) -> str:
    backend: str = request.param
    return backend


@pytest.mark.parametrize("line", [b"[", b"[1,", b' [{"jsonrpc":"2.0"', b"[]]"])
async def test_a_line_starting_with_a_bracket_that_is_not_json(
    server_backend: str, tmp_path: Path, line: bytes
) -> None:
    """Item 15: DecodeError out of the batch path before: no answer, a traceback."""
    stderr = tmp_path / "stderr"
    async with raw_server(ECHO_SERVER, "--backend", server_backend, stderr_path=stderr) as raw:
        await raw.initialize()
        answer = await raw.error_for(line)
        assert (answer["id"], answer["error"]["code"]) == (None, PARSE_ERROR), answer
    assert "Traceback" not in stderr.read_text()
